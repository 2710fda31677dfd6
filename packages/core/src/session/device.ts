/**
 * A coarse description of the device a session was started from, for the user's sessions page
 * (`/Account/Sessions`): the browser family and the operating system read from the User-Agent
 * header, nothing finer (no versions, no device model), so it tells a user's own devices apart
 * without fingerprinting them. A small table rather than a parser dependency: the families
 * change rarely and a wrong guess costs only a label. Plain data, no Fastify types.
 */

/** Longest User-Agent read; the rest is ignored. */
const MAX_USER_AGENT = 512

/** First match wins: order matters (Edge and Opera also say Chrome; Chrome also says Safari). */
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|Chromium|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari']
]

const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:iPhone|iPod)\b/, 'iOS'],
  [/\biPad\b/, 'iPadOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux']
]

/** "Firefox on Windows", "Safari on iOS", "Unknown browser on Linux", or "Unknown device". */
export function describeDevice (userAgent: string | undefined): string {
  if (userAgent === undefined || userAgent.trim() === '') return 'Unknown device'
  const text = userAgent.slice(0, MAX_USER_AGENT)
  const browser = BROWSERS.find(([pattern]) => pattern.test(text))?.[1]
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1]
  if (browser === undefined && system === undefined) return 'Unknown device'
  return `${browser ?? 'Unknown browser'} on ${system ?? 'an unknown system'}`
}
