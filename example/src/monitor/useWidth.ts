// The width an element is laid out at, in CSS px, for charts that draw at their real size: an SVG
// whose viewBox is as wide as its box draws one unit per pixel, so 12-unit text is 12 px from a
// phone to a desktop, where a fixed viewBox scaled to a phone's width shrinks it to half that.
import { useCallback, useRef, useState } from "react";

/**
 * useWidth returns a ref for an element and its current width (px), `fallback` until it is
 * measured (the first render, or where there is no ResizeObserver, as in jsdom).
 */
export function useWidth<T extends Element>(fallback: number): [(element: T | null) => void, number] {
  const [width, setWidth] = useState(fallback);
  const observer = useRef<ResizeObserver | undefined>(undefined);
  const ref = useCallback((element: T | null) => {
    observer.current?.disconnect();
    observer.current = undefined;
    if (element === null || typeof ResizeObserver === "undefined") return;
    const measure = (w: number) => {
      // Sub-pixel jitter would redraw the chart for nothing.
      if (w > 0) setWidth((old) => (Math.abs(old - w) < 0.5 ? old : w));
    };
    measure(element.getBoundingClientRect().width);
    observer.current = new ResizeObserver((entries) => {
      for (const entry of entries) measure(entry.contentRect.width);
    });
    observer.current.observe(element);
  }, []);
  return [ref, width];
}
