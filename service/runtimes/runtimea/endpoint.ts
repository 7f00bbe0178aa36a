/** Where a ready gateway answers, and the bearer it takes. */
export interface GatewayEndpoint {
  url: string;
  /** The bearer the gateway takes (token or password); '' for none. */
  token: string;
}
