/**
 * An error carrying the spec's status code and the `detail` text the client sees. Domain
 * code throws it where the spec names the failure; the HTTP layer turns it into `{detail}`.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
  }
}
