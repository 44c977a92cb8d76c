/**
 * Small DOM helpers. Text is always set with textContent: no HTML strings
 * from a report ever reach innerHTML.
 */

/** Attributes and properties that h() knows how to set. */
export interface IProps {
  /** CSS class names, space separated. */
  class?: string;
  /** Tooltip text (the title attribute). */
  title?: string;
  /** data-* attributes. */
  data?: { [key: string]: string };
  /** Inline styles, set through the style object. */
  style?: Partial<CSSStyleDeclaration>;
  /** Other plain attributes (no event handlers: those are refused). */
  attrs?: { [key: string]: string };
}

/** A child: an element, or text that becomes a text node. */
export type Child = Node | string | number | null | undefined | false;

/** Create an element; string children become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: IProps | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    if (props.class) {
      el.className = props.class;
    }
    if (props.title !== undefined) {
      el.title = props.title;
    }
    if (props.data) {
      for (const [k, v] of Object.entries(props.data)) {
        el.dataset[k] = v;
      }
    }
    if (props.style) {
      Object.assign(el.style, props.style);
    }
    if (props.attrs) {
      for (const [k, v] of Object.entries(props.attrs)) {
        if (k.toLowerCase().startsWith('on')) {
          continue;
        }
        el.setAttribute(k, v);
      }
    }
  }
  append(el, ...children);
  return el;
}

/** Append children; strings become text nodes. */
export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    parent.appendChild(
      typeof c === 'string' || typeof c === 'number'
        ? document.createTextNode(String(c))
        : c
    );
  }
}

/** Remove every child of an element. */
export function clear(el: Element): void {
  while (el.firstChild) {
    el.removeChild(el.firstChild);
  }
}

/** A view's panel when drawing it failed: the error in words, logged, the panel marked. */
export function showViewError(
  panel: HTMLElement,
  id: string,
  err: unknown
): void {
  console.error('jupyter_brrr: cannot draw view', id, err);
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-error', data: { testid: 'brrr-view-error' } },
      `This view could not be drawn: ${err instanceof Error ? err.message : String(err)}`
    )
  );
  panel.dataset.state = 'error';
}
