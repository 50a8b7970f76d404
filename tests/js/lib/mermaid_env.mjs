// Load the real mermaid 11 ESM build under a jsdom window (mermaid and its
// DOMPurify dependency need window/document to exist when they are imported).
import { JSDOM } from 'jsdom';

let cached;
export async function loadMermaid() {
  if (cached) return cached;
  const dom = new JSDOM('<!DOCTYPE html><html><body></body></html>', { pretendToBeVisual: true });
  const g = globalThis;
  g.window = dom.window;
  g.document = dom.window.document;
  for (const k of ['Element', 'HTMLElement', 'SVGElement', 'Node', 'DOMParser', 'XMLSerializer', 'MutationObserver', 'getComputedStyle']) {
    if (!(k in g)) g[k] = dom.window[k];
  }
  const { default: mermaid } = await import('mermaid');
  mermaid.initialize({ startOnLoad: false, logLevel: 'fatal' });
  cached = mermaid;
  return mermaid;
}
