/**
 * Hostile SCIM requests, each named by the rule it breaks, with the SCIM error it must get
 * (RFC 7644 §3.12). `{user}` in a path is the id of an existing user of the connection. Every one
 * must change nothing.
 */
export interface HostileRequest {
  readonly name: string
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH'
  readonly path: string
  readonly payload?: string
  readonly contentType?: string
  readonly status: number
  readonly scimType?: string
}

const patch = (operations: unknown): string => JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: operations })
const nested = (depth: number): unknown => depth === 0 ? 'x' : { a: nested(depth - 1) }
const filter = (text: string): string => `/Users?filter=${encodeURIComponent(text)}`

export const HOSTILE_REQUESTS: readonly HostileRequest[] = [
  { name: 'body-over-the-cap', method: 'POST', path: '/Users', payload: JSON.stringify({ userName: 'big', title: 'x'.repeat(300 * 1024) }), status: 413 },
  { name: 'content-type-text-plain', method: 'POST', path: '/Users', payload: '{"userName":"a"}', contentType: 'text/plain', status: 415 },
  { name: 'content-type-form', method: 'POST', path: '/Users', payload: 'userName=a', contentType: 'application/x-www-form-urlencoded', status: 415 },
  { name: 'invalid-json', method: 'POST', path: '/Users', payload: '{"userName": "a",', status: 400, scimType: 'invalidSyntax' },
  { name: 'json-array-body', method: 'POST', path: '/Users', payload: '[{"userName":"a"}]', status: 400, scimType: 'invalidSyntax' },
  { name: 'proto-key', method: 'POST', path: '/Users', payload: '{"userName":"a","__proto__":{"active":false}}', status: 400, scimType: 'invalidSyntax' },
  { name: 'constructor-key-nested', method: 'POST', path: '/Users', payload: '{"userName":"a","name":{"constructor":{"prototype":{}}}}', status: 400, scimType: 'invalidSyntax' },
  { name: 'nesting-over-the-cap', method: 'POST', path: '/Users', payload: JSON.stringify({ userName: 'a', name: nested(9) }), status: 400, scimType: 'invalidSyntax' },
  { name: 'missing-userName', method: 'POST', path: '/Users', payload: '{"name":{"givenName":"A"}}', status: 400, scimType: 'invalidValue' },
  { name: 'active-not-boolean', method: 'POST', path: '/Users', payload: '{"userName":"a","active":"maybe"}', status: 400, scimType: 'invalidValue' },
  { name: 'filter-unquoted-value', method: 'GET', path: filter('userName eq alice'), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-unknown-attribute', method: 'GET', path: filter('password eq "x"'), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-unbalanced-brackets', method: 'GET', path: filter('emails[type eq "work"'), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-unbalanced-parentheses', method: 'GET', path: filter('(userName eq "a"'), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-over-the-length-cap', method: 'GET', path: filter(`userName eq "${'a'.repeat(1100)}"`), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-over-the-depth-cap', method: 'GET', path: filter(`${'not ('.repeat(9)}userName eq "a"${')'.repeat(9)}`), status: 400, scimType: 'invalidFilter' },
  { name: 'filter-type-mismatch', method: 'GET', path: filter('active eq "True"'), status: 400, scimType: 'invalidFilter' },
  { name: 'count-not-an-integer', method: 'GET', path: '/Users?count=ten', status: 400, scimType: 'invalidValue' },
  { name: 'patch-unknown-op', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'merge', path: 'title', value: 'x' }]), status: 400, scimType: 'invalidSyntax' },
  { name: 'patch-remove-without-path', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'remove' }]), status: 400, scimType: 'noTarget' },
  { name: 'patch-path-to-id', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'id', value: 'mine' }]), status: 400, scimType: 'mutability' },
  { name: 'patch-path-to-meta', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'meta.created', value: '2000-01-01T00:00:00Z' }]), status: 400, scimType: 'mutability' },
  { name: 'patch-path-to-schemas', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'schemas', value: [] }]), status: 400, scimType: 'mutability' },
  { name: 'patch-unknown-path', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'identity', value: 'x' }]), status: 400, scimType: 'invalidPath' },
  { name: 'patch-over-the-operation-cap', method: 'PATCH', path: '/Users/{user}', payload: patch(Array.from({ length: 101 }, () => ({ op: 'replace', path: 'title', value: 'x' }))), status: 400, scimType: 'invalidValue' },
  { name: 'patch-no-operations', method: 'PATCH', path: '/Users/{user}', payload: patch([]), status: 400, scimType: 'invalidSyntax' },
  { name: 'patch-valid-then-invalid-is-atomic', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'title', value: 'Changed' }, { op: 'replace', path: 'userName', value: null }]), status: 400, scimType: 'invalidValue' },
  { name: 'patch-filtered-replace-without-a-target-it-can-build', method: 'PATCH', path: '/Users/{user}', payload: patch([{ op: 'replace', path: 'emails[value co "x"].type', value: 'work' }]), status: 400, scimType: 'noTarget' },
  { name: 'post-to-service-provider-config', method: 'POST', path: '/ServiceProviderConfig', payload: '{}', status: 405 },
  { name: 'put-to-schemas', method: 'PUT', path: '/Schemas', payload: '{}', status: 405 },
  { name: 'post-to-resource-types', method: 'POST', path: '/ResourceTypes', payload: '{}', status: 405 }
]
