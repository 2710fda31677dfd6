/** A user agent over real HTTP: `@project-template/core/testing` (src/testing/http-session.ts). */
export { CookieJar, findPlanted, HttpSession, isSessionCookie, sessionCookiesSet } from '../../../src/testing/http-session.js'
export type { Exchange } from '../../../src/testing/http-session.js'
