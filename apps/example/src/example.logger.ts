import { ConsoleLogger } from '@nestjs/common';

/** Nest's own start-up chatter: a line per module initialised and per route mapped, "starting", "started". */
const STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * Nest's console logger without its start-up listing at `log` level, so the example's banner is what a
 * start shows. Everything else passes: warnings and errors from any context, the app's and the
 * library's own log lines.
 */
export class ExampleLogger extends ConsoleLogger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    if (typeof context === 'string' && STARTUP_CONTEXTS.has(context)) return;
    super.log(message, ...optionalParams);
  }
}
