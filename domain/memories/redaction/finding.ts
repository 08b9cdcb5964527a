/** A secret found in a text: the span to replace, and the kind its marker names. */
export interface Finding {
  readonly start: number;
  readonly end: number;
  readonly kind: string;
}
