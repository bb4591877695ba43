/** Milliseconds as a number, or a string such as `'500ms'`, `'30s'`, `'5m'`, `'2h'`, `'7d'`. */
export type Duration = number | `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;
