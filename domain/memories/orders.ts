// The orders a list of memories may be asked in (list.ts), apart so that request schemas import no store code.
export const LIST_ORDERS = ['newest', 'oldest', 'updated_desc', 'updated_asc'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];
