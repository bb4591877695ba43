// The client's module names its stored token by the page's base URI: a page's, for this node run.
(globalThis as { document?: unknown }).document = { baseURI: 'http://localhost/durable/' };
// Required after the page above (an import would be hoisted before it); untyped: the type checker of the
// tests has no DOM, which the client's module uses.
const { ApiError } = require('../../apps/dashboard/src/api/client');

// The payload forms place an error's issues at their fields (serverErrorSchema): only a refused payload's
// issues have a path. An INVALID_ARGUMENT names its fields in its message, and its issues have none.

describe("the dashboard's ApiError: the issues a payload form shows at its fields", () => {
  it("gives an INVALID_PAYLOAD's issues, each with its path", () => {
    const issue = { path: 'parcels.0.grams', message: 'Too small' };
    expect(new ApiError(400, 'INVALID_PAYLOAD', 'refused', { issues: [issue, { message: 'no path' }] }).issues).toEqual([issue]);
  });

  it("gives none of an INVALID_ARGUMENT's (they have no path: the form threw on them and fell back to JSON, the error gone)", () => {
    const details = { issues: [{ in: 'body', name: 'key', message: 'must hold at most 200 characters' }] };
    expect(new ApiError(400, 'INVALID_ARGUMENT', 'Body field "key": must hold at most 200 characters.', details).issues).toEqual([]);
    expect(new ApiError(500, 'INTERNAL', 'boom').issues).toEqual([]);
  });
});
