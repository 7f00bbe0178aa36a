/**
 * The two drive connectors and the sync tool's backend behind each. The wire `type` of a
 * listed remote is `drive` for both (the spec's shapes are identical); the filter uses the
 * backend's own type, since OneDrive remotes are `onedrive` in rclone's config.
 */
export type DriveConnector = 'drivea' | 'driveb';

export const DRIVE_CONNECTORS: readonly DriveConnector[] = ['drivea', 'driveb'];

export const BACKEND_TYPE: Readonly<Record<DriveConnector, string>> = {
  drivea: 'drive',
  driveb: 'onedrive',
};

/** rclone's OAuth listener: a fixed port on loopback, shared by every backend. */
export const OAUTH_PORT = 53682;
