// Added to gitleaks' cmd/generate/config/utils by scripts/redaction-corpus/generate.sh (not part of
// gitleaks): every rule that gitleaks' generator validates is written out, with the samples it was
// validated against, as one JSON line in $GITLEAKS_RECORD.
package utils

import (
	"encoding/json"
	"os"

	"github.com/zricethezav/gitleaks/v8/cmd/generate/config/base"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/regexp"
)

type recordedAllowlist struct {
	Condition   string   `json:"condition"`
	RegexTarget string   `json:"regexTarget"`
	Regexes     []string `json:"regexes"`
	StopWords   []string `json:"stopWords"`
	Paths       []string `json:"paths"`
}

// A true positive with the secrets gitleaks itself extracts from it (its findings' Secret).
type recordedSample struct {
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
}

type recordedRule struct {
	ID          string              `json:"id"`
	Description string              `json:"description"`
	Regex       string              `json:"regex"`
	SecretGroup int                 `json:"secretGroup"`
	Entropy     float64             `json:"entropy"`
	Keywords    []string            `json:"keywords"`
	Path        string              `json:"path"`
	Allowlists  []recordedAllowlist `json:"allowlists"`
	TruePositives  []recordedSample `json:"truePositives"`
	FalsePositives []string         `json:"falsePositives"`
}

func patterns(list []*regexp.Regexp) []string {
	out := []string{}
	for _, r := range list {
		out = append(out, r.String())
	}
	return out
}

func allowlists(list []*config.Allowlist) []recordedAllowlist {
	out := []recordedAllowlist{}
	for _, a := range list {
		stop := append([]string{}, a.StopWords...)
		out = append(out, recordedAllowlist{a.MatchCondition.String(), a.RegexTarget, patterns(a.Regexes), stop, patterns(a.Paths)})
	}
	return out
}

func writeRecord(v any) {
	f, err := os.OpenFile(os.Getenv("GITLEAKS_RECORD"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(v); err != nil {
		panic(err)
	}
}

func record(r config.Rule, tps []string, fps []string) {
	if os.Getenv("GITLEAKS_RECORD") == "" {
		return
	}
	path := ""
	if r.Path != nil {
		path = r.Path.String()
	}
	regex := ""
	if r.Regex != nil {
		regex = r.Regex.String()
	}
	keywords := append([]string{}, r.Keywords...)
	samples := []recordedSample{}
	detector := createSingleRuleDetector(&r)
	for _, tp := range tps {
		secrets := []string{}
		for _, finding := range detector.DetectString(tp) {
			secrets = append(secrets, finding.Secret)
		}
		samples = append(samples, recordedSample{tp, secrets})
	}
	writeRecord(recordedRule{r.RuleID, r.Description, regex, r.SecretGroup, r.Entropy, keywords, path, allowlists(r.Allowlists), samples, append([]string{}, fps...)})
}

func values(m map[string]string) []string {
	out := []string{}
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// The global allowlist, once, as a rule without id.
func RecordGlobal() {
	if os.Getenv("GITLEAKS_RECORD") == "" {
		return
	}
	writeRecord(map[string]any{"global": allowlists(base.CreateGlobalConfig().Allowlists)})
}
