import { describe, expect, it } from 'vitest';
import { rcloneOptions, remoteNameProblem } from './rclone-kinds.js';

describe('rcloneOptions', () => {
  it('sends rclone’s option names, leaves empty fields out and keeps a secret as typed', () => {
    expect(rcloneOptions('s3', { provider: 'Minio', endpoint: ' http://127.0.0.1:9000 ', access_key_id: 'AK', secret_access_key: ' s3cret ', region: '' })).toEqual({
      options: { provider: 'Minio', endpoint: 'http://127.0.0.1:9000', access_key_id: 'AK', secret_access_key: ' s3cret ' },
    });
  });

  it('needs the required fields, and an endpoint for S3 services other than Amazon', () => {
    expect(rcloneOptions('s3', { provider: 'AWS', access_key_id: 'AK' })).toEqual({ problem: 'Secret access key is needed.' });
    expect(rcloneOptions('s3', { provider: 'Ceph', access_key_id: 'AK', secret_access_key: 'x' })).toEqual({
      problem: 'Give the endpoint of this S3 service (only Amazon needs none).',
    });
  });

  it('writes a PEM key on one line with \\n line endings, as rclone’s key_pem takes it', () => {
    const result = rcloneOptions('sftp', { host: 'h', user: 'u', key_pem: '-----BEGIN KEY-----\r\nabc\ndef\n-----END KEY-----\n' });
    expect(result).toEqual({ options: { host: 'h', user: 'u', key_pem: '-----BEGIN KEY-----\\nabc\\ndef\\n-----END KEY-----' } });
  });

  it('asks SFTP for a password or a key, and a port in range', () => {
    expect(rcloneOptions('sftp', { host: 'h', user: 'u' })).toEqual({ problem: 'Give a password or a private key.' });
    expect(rcloneOptions('sftp', { host: 'h', user: 'u', pass: 'p', port: '70000' })).toEqual({ problem: 'The port is a number from 1 to 65535.' });
  });

  it('refuses a WebDAV URL that is not http(s) and a password over two lines', () => {
    expect(rcloneOptions('webdav', { url: 'ftp://x', vendor: 'other' })).toEqual({ problem: 'The URL starts with https:// (or http://).' });
    expect(rcloneOptions('webdav', { url: 'https://x/', vendor: 'other', pass: 'a\nb' })).toEqual({ problem: 'Password must be one line.' });
  });
});

describe('remoteNameProblem', () => {
  it('takes the server’s rule for names', () => {
    expect(remoteNameProblem('lab-s3')).toBeNull();
    expect(remoteNameProblem('Lab')).not.toBeNull();
    expect(remoteNameProblem('')).not.toBeNull();
  });
});
