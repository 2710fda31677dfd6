/** `npm run generate`: rewrites appsettings.schema.json and the key table of docs/configuration.md from the core's schema. */
import { writeConfigurationReference } from '@project-template/core'
import { APPLICATION_NAME } from './application-name.js'
import { CONTENT_ROOT } from './content-root.js'

writeConfigurationReference(CONTENT_ROOT, APPLICATION_NAME)
