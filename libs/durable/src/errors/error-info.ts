/**
 * An error as it is stored and shown: its class name and message; the stack it was thrown with
 * (capped) for an operator reading a failed run; and, when it came out of a step, that step's key.
 */
export interface ErrorInfo {
  name: string;
  message: string;
  stack?: string;
  step?: string;
}
