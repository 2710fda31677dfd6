// @ts-check
/**
 * The generator's two failure kinds. Invalid input is the caller's to fix and exits with status 2
 * before anything is written; a failure while writing or installing exits with status 1.
 */

/** Exit status for invalid input (nothing written). */
export const EXIT_USAGE = 2
/** Exit status for a failure while writing (rolled back) or installing. */
export const EXIT_FAILURE = 1
/** Exit status when the user cancels a prompt. */
export const EXIT_CANCELLED = 130

/** Invalid input: an unknown option, a bad value, an unusable target directory. */
export class UsageError extends Error {
  /**
   * @param {string} message names the option or path and what was expected
   * @param {ErrorOptions} [options]
   */
  constructor (message, options) {
    super(message, options)
    this.name = 'UsageError'
  }
}
