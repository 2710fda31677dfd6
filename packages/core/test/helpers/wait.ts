/** The one bounded wait of the test suite: `@project-template/core/testing` (src/testing/wait.ts). */
export { waitFor } from '../../src/testing/wait.js'
