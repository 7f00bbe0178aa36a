/**
 * The service's OAuth protected resource metadata (RFC 9728) for clients that register
 * with the deploy host dynamically. `registration_endpoint` is an RFC 8414 field that the
 * spec wants here too; RFC 9728 lets extra members through, and conformant clients also
 * find it in the authorization server's own metadata.
 */
export interface ResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  registration_endpoint?: string;
}

export function resourceMetadata(input: { resource: string; issuer: string | undefined; registrationEndpoint?: string; scopes: string[] }): ResourceMetadata {
  return {
    resource: input.resource,
    authorization_servers: input.issuer ? [input.issuer] : [],
    scopes_supported: input.scopes,
    bearer_methods_supported: ['header'],
    resource_name: 'Space',
    ...(input.registrationEndpoint ? { registration_endpoint: input.registrationEndpoint } : {}),
  };
}
