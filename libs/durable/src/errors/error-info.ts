/** An error as it is stored and shown: its class name and message. */
export interface ErrorInfo {
  name: string;
  message: string;
}
