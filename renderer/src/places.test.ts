import { describe, expect, it } from 'vitest';
import type { TargetDescription } from '../../shared/api.js';
import { placeGroups } from './places.js';

const target = (name: string, readable_name: string) => ({ name, readable_name }) as TargetDescription;

describe('placeGroups', () => {
  it('puts the workspace first, chosen folders after it, the library apart, services last; marks services with no account', () => {
    const groups = placeGroups(
      [target('local', 'Local folders'), target('offline', 'Downloaded ZIPs'), target('osf', 'OSF'), target('git', 'Git repository (HTTPS)'), target('local-data', 'Data')],
      [
        { name: 'osf', readable_name: 'OSF', credential: 'remote', has_stored_token: false },
        { name: 'git', readable_name: 'Git', credential: 'remote', has_stored_token: true },
      ],
      { local: '/home/a/Ferry', 'local-data': '/home/a/Data' },
    );
    expect(groups.map((g) => [g.title, g.places.map((p) => `${p.icon}:${p.target}${p.needsAccount ? '!' : ''}`)])).toEqual([
      ['This computer', ['home:local', 'folder:local-data']],
      ['Library', ['archive:offline']],
      ['Services', ['cloud:osf!', 'git:git']],
    ]);
    expect(groups[0]!.places[1]!.path).toBe('/home/a/Data');
  });

  it('keeps This computer even before the targets are known (so folders can be added)', () => {
    expect(placeGroups([], [], {}).map((g) => g.title)).toEqual(['This computer']);
  });
});
