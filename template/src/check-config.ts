/**
 * `npm run check-config [-- --json]` (built: `node dist/check-config.js`): validates this app's
 * configuration as startup does and prints a summary, without starting the server.
 */
import { runCheckConfig } from '@project-template/core'
import { APPLICATION_NAME } from './application-name.js'
import { CONTENT_ROOT } from './content-root.js'

await runCheckConfig({ contentRoot: CONTENT_ROOT, applicationName: APPLICATION_NAME })
