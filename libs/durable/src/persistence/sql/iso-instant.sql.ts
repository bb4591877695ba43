/** An instant as text in the form Date.toISOString() writes (UTC, milliseconds): how the serializer stores a Date, and the engine's messages name one. */
export const isoInstantSql = (at: string) => `to_char((${at}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
