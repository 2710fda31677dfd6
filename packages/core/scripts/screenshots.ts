/**
 * Screenshots of the core's pages for the docs (docs/screenshots/, shown in docs/pages.md), run by
 * hand after a change to the pages or the stylesheet:
 *
 *   npm run screenshots --workspace packages/core
 *
 * The same app and pages as the accessibility test (test/helpers/pages-in-chromium.ts), in Debian's
 * Chromium (CHROMIUM_PATH, default /usr/bin/chromium; no browser is downloaded), each page at a
 * desktop width (1280 px) and a phone width (390 px), and the login page in the dark scheme too.
 * Writes `<page>-desktop.png` and `<page>-phone.png`.
 */
import { mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launchChromium } from '../test/helpers/providers/browser.js'
import { CORE_PAGES, signInContext, startPagesApp, visit } from '../test/helpers/pages-in-chromium.js'

const OUTPUT = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'screenshots')
const WIDTHS = [{ suffix: 'desktop', width: 1280, height: 800 }, { suffix: 'phone', width: 390, height: 844 }] as const
const SHOTS = [
  ...CORE_PAGES.map((page) => ({ page, colorScheme: 'light' as const, name: page.name })),
  ...CORE_PAGES.filter((page) => page.name === 'login').map((page) => ({ page, colorScheme: 'dark' as const, name: `${page.name}-dark` }))
]
// The 429 page uses up the challenge budget: it goes last.
SHOTS.sort((a, b) => Number(a.page.prepare !== undefined) - Number(b.page.prepare !== undefined))

mkdirSync(OUTPUT, { recursive: true })
const app = await startPagesApp()
const browser = await launchChromium()
try {
  for (const shot of SHOTS) {
    for (const [index, size] of WIDTHS.entries()) {
      const context = await browser.newContext()
      try {
        if (shot.page.signedIn === true) await signInContext(app, context)
        const page = await context.newPage()
        await page.setViewportSize({ width: size.width, height: size.height })
        await page.emulateMedia({ colorScheme: shot.colorScheme })
        // The budget is used up once; the phone shot of the 429 page finds it used up already.
        const status = await visit(app, page, index === 0 ? shot.page : { ...shot.page, prepare: undefined })
        if (status !== shot.page.status) throw new Error(`${shot.page.path} answered ${String(status)}, expected ${shot.page.status}`)
        const file = join(OUTPUT, `${shot.name}-${size.suffix}.png`)
        await page.screenshot({ path: file, fullPage: true })
        console.log(file)
      } finally {
        await context.close()
      }
    }
  }
} finally {
  await browser.close()
  await app.subject.app.close()
}
