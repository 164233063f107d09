import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { ExtraValue } from './DetailPanel.js';

afterEach(cleanup);

describe("a target's extra fields in Details", () => {
  it("a page address the service gives (a Dataverse dataset's html_url) is a link that opens outside Ferry", () => {
    const url = 'https://demo.dataverse.org/dataset.xhtml?persistentId=doi%3A10.5072%2FFK2%2FABC&version=DRAFT';
    render(<ExtraValue name="html_url" value={url} />);
    const link = screen.getByRole('link', { name: url });
    expect(link.getAttribute('href')).toBe(url);
    expect(link.getAttribute('target')).toBe('_blank');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('anything else stays text: another scheme, a field not named …_url, a value that is not a string', () => {
    render(
      <>
        <ExtraValue name="html_url" value="javascript:alert(1)" />
        <ExtraValue name="version_state" value="https://example.org/" />
        <ExtraValue name="download_url" value={42} />
      </>,
    );
    expect(screen.queryAllByRole('link')).toEqual([]);
    expect(document.body.textContent).toContain('javascript:alert(1)');
  });
});
