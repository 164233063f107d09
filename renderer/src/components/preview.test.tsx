import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { ServicesContext, type Services } from '../services.js';
import { FilePreview } from './FilePreview.js';

afterEach(cleanup);

function renderPreview(title: string, fileHead: (...args: unknown[]) => Promise<{ bytes: Uint8Array; truncated: boolean }>) {
  const api = { fileHead: vi.fn(fileHead) };
  render(
    <ServicesContext.Provider value={{ api } as unknown as Services}>
      <FilePreview target="local" id="f1" title={title} />
    </ServicesContext.Provider>,
  );
  return api.fileHead;
}

const answer = (text: string, truncated = false) => async () => ({ bytes: new TextEncoder().encode(text), truncated });

describe('the preview in the Details panel', () => {
  it('shows markup in a text file as text, never as HTML', async () => {
    const fileHead = renderPreview('page.html', answer('<img src=x onerror="alert(1)"><b>bold</b>'));
    const text = await screen.findByLabelText('First lines of page.html');
    expect(text.textContent).toBe('<img src=x onerror="alert(1)"><b>bold</b>');
    expect(text.querySelector('img, b')).toBeNull();
    expect(fileHead).toHaveBeenCalledWith('local', 'f1', 64 * 1024, expect.any(AbortSignal));
  });

  it('shows SVG through an <img> of the type Ferry chose, never as inline markup', async () => {
    renderPreview('figure.svg', answer('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'));
    const image = (await screen.findByRole('img', { name: 'Preview of figure.svg' })) as HTMLImageElement;
    expect(image.src).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(document.querySelector('svg, script')).toBeNull();
  });

  it('does not show part of an image', async () => {
    renderPreview('photo.png', answer('x', true));
    expect((await screen.findByText(/Images larger than/)).textContent).toContain('are not previewed');
    expect(screen.queryByRole('img')).toBeNull();
  });

  it('shows a CSV as a table with its first row as the column heads', async () => {
    renderPreview('data.csv', answer('site,depth_m\nA,10\nB,"2,5"\n'));
    const table = await screen.findByRole('table');
    expect([...table.querySelectorAll('th')].map((th) => th.textContent)).toEqual(['site', 'depth_m']);
    expect([...table.querySelectorAll('tbody tr')].map((tr) => tr.textContent)).toEqual(['A10', 'B2,5']);
  });

  it('says why there is no preview, and tries again on request', async () => {
    let calls = 0;
    renderPreview('notes.txt', async () => {
      calls += 1;
      if (calls === 1) throw new Error('The remote service is unavailable right now.');
      return { bytes: new TextEncoder().encode('back'), truncated: false };
    });
    expect((await screen.findByRole('alert')).textContent).toContain('The preview could not be loaded: The remote service is unavailable right now.');
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect((await screen.findByLabelText('First lines of notes.txt')).textContent).toBe('back');
  });

  it('asks for nothing for a file it does not preview', () => {
    const fileHead = renderPreview('archive.zip', answer('PK'));
    expect(screen.queryByRole('region', { name: 'Preview' })).toBeNull();
    expect(fileHead).not.toHaveBeenCalled();
  });
});
