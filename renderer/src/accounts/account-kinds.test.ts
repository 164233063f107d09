import { describe, expect, it } from 'vitest';
import { accountKind, composeToken } from './account-kinds.js';

describe('composeToken', () => {
  it.each([
    ['osf', { token: ' abc ' }, { token: 'abc' }],
    ['webdav', { url: 'https://c.example.org/dav/', username: 'al', password: 'p w' }, { token: '{"url":"https://c.example.org/dav/","username":"al","password":"p w"}' }],
    ['git', { url: 'https://g.example.org/a/b.git', username: 'al', password: 't', branch: '' }, { token: '{"url":"https://g.example.org/a/b.git","username":"al","password":"t"}' }],
    ['git', { url: 'https://g.example.org/a/b.git', username: 'al', password: 't', branch: 'data' }, { token: '{"url":"https://g.example.org/a/b.git","username":"al","password":"t","branch":"data"}' }],
    ['dataverse', { url: 'https://dataverse.no', token: 'k', collection: 'uit' }, { token: '{"url":"https://dataverse.no","token":"k","collection":"uit"}' }],
    ['invenio', { url: 'https://r.example.org', token: 'k' }, { token: '{"url":"https://r.example.org","token":"k"}' }],
    ['webdav', { url: 'cloud.example.org', username: 'al', password: 'p' }, { problem: 'The server url must start with https:// (or http://), e.g. https://cloud.example.org/remote.php/dav/files/<user>/.' }],
    ['webdav', { url: 'https://c.example.org/', username: '', password: 'p' }, { problem: 'Enter the user for WebDAV.' }],
    ['rclone-x', { token: '' }, { problem: 'Enter the token for WebDAV.' }],
  ])('%s %j', (target, values, expected) => {
    expect(composeToken(accountKind(target), values, 'WebDAV')).toEqual(expected);
  });

  it('every plain-token service links to where its token is made', () => {
    for (const name of ['osf', 'github', 'gitlab', 'zenodo', 'figshare']) expect(accountKind(name).help.href).toMatch(/^https:\/\//);
  });
});
