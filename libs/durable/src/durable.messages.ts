/**
 * Messages reused by several checks, as functions, so that one mistake reads the same wherever it is
 * caught.
 */

/** A @Workflow class or a @Step method found on a provider that is not a singleton. */
export function notSingletonMessage(what: string): string {
  return (
    `${what} is request- or transient-scoped: a run executes outside any request, and only the provider's one ` +
    'instance built at boot is made durable, so it must be a singleton provider. Remove the scope (and any ' +
    'request-scoped dependency, which makes it request-scoped too), or move the @Step method to a singleton ' +
    'provider and pass what the request knows as arguments.'
  );
}
