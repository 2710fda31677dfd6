/**
 * Times on the account pages: minutes in UTC (`2026-11-25 18:20 UTC`), in a `<time>` element that
 * carries the ISO value. Plain data to HTML.
 */
import { html, type SafeHtml } from './html.js'

/** `2026-11-25 18:20 UTC` for seconds since the epoch. */
export function timeText (seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** {@link timeText} in a `<time>` element with the ISO value. */
export function timeElement (seconds: number): SafeHtml {
  return html`<time datetime="${new Date(seconds * 1000).toISOString()}">${timeText(seconds)}</time>`
}
