/**
 * The one base class of every refusal a provider's response, logout token or token refresh can
 * end in, as Auth.js's `errors.ts` has one base error with a named subclass per refusal: the
 * protocol folders throw their own subclass (`Saml2ResponseError`, `OpenIdConnectError`,
 * `VendorFlowError`, `LogoutTokenError`, `TokenRefreshError`), and the plugins tell a refusal
 * from any other error with `instanceof SignInRefusal` and read its fields, never by duck typing.
 */

/**
 * Safe log fields of a refusal, chosen by the code that refuses: an HTTP status, an OAuth
 * `error` code, a network cause code, a fixed algorithm name. Never a value taken from the
 * message, a token, a description or a secret.
 */
export type RefusalDiagnostics = Readonly<Record<string, string | number>>

/**
 * A refused step: `failure` is the class logged as `failure`, from the subclass's closed set (a
 * sign-in protocol's part of `SignInFailure` in sign-in/sign-in-failure.ts, or the classes of
 * logout tokens and token refresh), `diagnostics` the safe log fields, `cause` the library error
 * (for the log's error name and code only). The message is a fixed phrase, never message content.
 */
export class SignInRefusal<F extends string, D extends object = RefusalDiagnostics> extends Error {
  /** The failure class, logged as `failure`. */
  readonly failure: F
  /** Safe log fields ({@link RefusalDiagnostics}); the empty object when there are none. */
  readonly diagnostics: D

  constructor (failure: F, message: string, options?: ErrorOptions & { readonly diagnostics?: D }) {
    super(message, options)
    this.name = 'SignInRefusal'
    this.failure = failure
    // Every diagnostics shape has optional fields only: none is the empty object.
    this.diagnostics = options?.diagnostics ?? {} as D
  }
}
