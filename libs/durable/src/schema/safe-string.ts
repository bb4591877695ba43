/** Text for anything thrown, even what JSON and String refuse (a throwing toJSON or toString, a null prototype). */
export function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}

/** The longest error message kept (a stored error's, a span's). */
const MAX_MESSAGE = 8_000;

/** `message` cut to MAX_MESSAGE, saying how much was left out. */
export function capMessage(message: string): string {
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}… (${message.length - MAX_MESSAGE} more characters)` : message;
}

/** The longest stack kept. */
const MAX_STACK = 4_000;

/** `stack` cut to MAX_STACK, saying how much was left out. */
export function capStack(stack: string): string {
  return stack.length > MAX_STACK ? `${stack.slice(0, MAX_STACK)}\n    … (${stack.length - MAX_STACK} more characters)` : stack;
}
