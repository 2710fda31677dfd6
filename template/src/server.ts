/**
 * Process entry (`npm start`, `npm run dev`): configuration, logger, listen, graceful shutdown,
 * all done by the core's runServer with this app's parts.
 */
import { runServer } from '@project-template/core'
import { application } from './app.js'
import { CONTENT_ROOT } from './content-root.js'

await runServer({ contentRoot: CONTENT_ROOT, ...application })
