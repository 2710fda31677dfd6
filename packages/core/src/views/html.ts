/**
 * HTML with escaping by default: every interpolated value is escaped unless it is already
 * {@link SafeHtml}. Attribute values must be quoted in templates.
 *
 * @public
 */
export class SafeHtml {
  readonly value: string

  constructor (value: string) {
    this.value = value
  }

  toString (): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' }

const SPECIAL = /[&<>"'`]/
const SPECIALS = /[&<>"'`]/g

/** @public */
export function escapeHtml (text: string): string {
  // Most values have nothing to escape: one scan, no replacement callback.
  return SPECIAL.test(text) ? text.replace(SPECIALS, (character) => ESCAPES[character] ?? character) : text
}

function render (value: unknown): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === undefined || value === null || value === false) return ''
  return escapeHtml(String(value))
}

/** @public */
export function html (strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? ''
  for (let index = 0; index < values.length; index++) out += render(values[index]) + (strings[index + 1] ?? '')
  return new SafeHtml(out)
}
