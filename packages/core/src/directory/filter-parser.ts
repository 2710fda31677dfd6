/**
 * The SCIM filter parser (RFC 7644 §3.4.2.2, Figure 1) and PATCH path parser (§3.5.2): a filter
 * string becomes a {@link ScimFilter}, or a {@link ScimFilterError} (`invalidFilter`); nothing in
 * between, so a filter is never matched in part.
 *
 * - Operators `eq ne co sw ew pr gt ge lt le`, `and` (binds tighter than `or`), `not (...)`,
 *   parentheses, value paths `emails[type eq "work"]`, attribute paths with a sub-attribute and
 *   an optional schema URN prefix (`urn:ietf:params:scim:schemas:core:2.0:User:userName`).
 * - Attribute names, operators and the literals `true false null` in any case.
 * - Values: JSON strings (with their escapes), JSON numbers, booleans, null; a `dateTime`
 *   attribute's value must be an RFC 3339 date-time, passed on as ISO 8601 UTC.
 * - Refused: an attribute the store does not support ({@link scimAttribute}), a value of the
 *   wrong type for its attribute, an operator its type has no meaning for (`gt` on a boolean,
 *   `co` on a number), a filter longer, deeper or with more comparisons than
 *   {@link SCIM_FILTER_LIMITS}. The recursion is bounded by the depth cap, the loops by the length.
 */
import { RESOURCE_SCHEMAS, scimAttribute, SCIM_GROUP_SCHEMA, SCIM_USER_SCHEMA, type DirectoryResourceType, type ScimAttributeDefinition } from './attributes.js'
import { ScimFilterError } from './directory-errors.js'
import { SCIM_FILTER_LIMITS, type ScimCompareOperator, type ScimFilter, type ScimFilterValue, type ScimPath } from './filter.js'

const COMPARE_OPERATORS: ReadonlySet<string> = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'])
const ORDERING: ReadonlySet<string> = new Set(['gt', 'ge', 'lt', 'le'])
const SUBSTRING: ReadonlySet<string> = new Set(['co', 'sw', 'ew'])
/** An attribute path: letters, digits, `-` `_` `.` `:` `$` (URN prefixes hold `:` and `2.0`). */
const WORD = /[A-Za-z][A-Za-z0-9_.:$-]*/y
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
/** A JSON string: no raw control character, only JSON's escapes. */
// eslint-disable-next-line no-control-regex -- refusing raw control characters is the point
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4}))*"/y
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_-]*(?:\.(?:[A-Za-z][A-Za-z0-9_-]*|\$ref))?$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/

interface Options {
  readonly resourceType: DirectoryResourceType
  readonly scimType: 'invalidFilter' | 'invalidPath'
}

class Parser {
  readonly #text: string
  readonly #options: Options
  #position = 0
  #terms = 0

  constructor (text: string, options: Options) {
    this.#text = text
    this.#options = options
  }

  fail (reason: ScimFilterError['reason'], detail: string, position = this.#position): never {
    throw new ScimFilterError(reason, position, detail, this.#options.scimType)
  }

  get position (): number {
    return this.#position
  }

  get atEnd (): boolean {
    this.#skipSpaces()
    return this.#position >= this.#text.length
  }

  #skipSpaces (): void {
    while (this.#text.charCodeAt(this.#position) === 0x20) this.#position++
  }

  /** The next character after spaces, without consuming it. */
  peekCharacter (): string {
    this.#skipSpaces()
    return this.#text.charAt(this.#position)
  }

  expectCharacter (character: string): void {
    if (this.peekCharacter() !== character) this.fail('syntax', `expected ${character}`)
    this.#position++
  }

  #match (pattern: RegExp): string | undefined {
    this.#skipSpaces()
    pattern.lastIndex = this.#position
    const match = pattern.exec(this.#text)
    if (match === null) return undefined
    this.#position += match[0].length
    return match[0]
  }

  /** The next word (attribute path or keyword), consumed, with its start. */
  word (what: string): { text: string, start: number } {
    this.#skipSpaces()
    const start = this.#position
    const text = this.#match(WORD)
    if (text === undefined) this.fail('syntax', `expected ${what}`)
    return { text, start }
  }

  /** The next word in lower case when it is one of `words`, consumed; otherwise nothing consumed. */
  keyword (words: ReadonlySet<string>): string | undefined {
    this.#skipSpaces()
    const start = this.#position
    const text = this.#match(WORD)?.toLowerCase()
    if (text !== undefined && words.has(text)) return text
    this.#position = start
    return undefined
  }

  // ------------------------------------------------------------------------------------------
  // FILTER = orExpr; orExpr = andExpr *("or" andExpr); andExpr = unary *("and" unary)

  filter (depth: number, parent: ScimAttributeDefinition | undefined): ScimFilter {
    const operands = [this.#conjunction(depth, parent)]
    while (this.keyword(OR) !== undefined) operands.push(this.#conjunction(depth, parent))
    return operands.length === 1 ? operands[0] as ScimFilter : { op: 'or', filters: operands }
  }

  #conjunction (depth: number, parent: ScimAttributeDefinition | undefined): ScimFilter {
    const operands = [this.#unary(depth, parent)]
    while (this.keyword(AND) !== undefined) operands.push(this.#unary(depth, parent))
    return operands.length === 1 ? operands[0] as ScimFilter : { op: 'and', filters: operands }
  }

  #deeper (depth: number): number {
    if (depth + 1 > SCIM_FILTER_LIMITS.maxDepth) this.fail('too_deep', `more than ${SCIM_FILTER_LIMITS.maxDepth} levels of nesting`)
    return depth + 1
  }

  #unary (depth: number, parent: ScimAttributeDefinition | undefined): ScimFilter {
    if (this.peekCharacter() === '(') return this.#group(this.#deeper(depth), parent)
    const start = this.#position
    if (this.keyword(NOT) !== undefined) {
      if (this.peekCharacter() === '(') return { op: 'not', filter: this.#group(this.#deeper(depth), parent) }
      this.fail('syntax', 'expected ( after not', start)
    }
    return this.#expression(depth, parent)
  }

  #group (depth: number, parent: ScimAttributeDefinition | undefined): ScimFilter {
    this.expectCharacter('(')
    const inner = this.filter(depth, parent)
    this.expectCharacter(')')
    return inner
  }

  /** attrExp or valuePath. */
  #expression (depth: number, parent: ScimAttributeDefinition | undefined): ScimFilter {
    const { text, start } = this.word('an attribute')
    const attribute = this.resolve(text, start, parent)
    if (this.peekCharacter() === '[') {
      if (parent !== undefined) this.fail('syntax', 'a value path inside a value path')
      const outer = this.#multiValued(attribute, start)
      this.#position++
      const inner = this.filter(this.#deeper(depth), outer)
      this.expectCharacter(']')
      return { op: 'valuePath', attribute: outer.name, filter: inner }
    }
    if (++this.#terms > SCIM_FILTER_LIMITS.maxTerms) this.fail('too_complex', `more than ${SCIM_FILTER_LIMITS.maxTerms} comparisons`, start)
    const operatorStart = this.#position
    const operator = this.keyword(OPERATORS)
    if (operator === undefined) this.fail('syntax', 'expected an operator (eq, ne, co, sw, ew, pr, gt, ge, lt, le)')
    if (operator === 'pr') return { op: 'pr', attribute: attribute.name }
    const compared = this.#compared(attribute, operatorStart)
    const valueStart = this.#position
    const value = this.#value()
    return { op: operator as ScimCompareOperator, attribute: compared.name, value: checkValue(compared, operator as ScimCompareOperator, value, (reason, detail) => this.fail(reason, detail, valueStart)) }
  }

  #multiValued (attribute: ScimAttributeDefinition, start: number): ScimAttributeDefinition {
    if (attribute.type !== 'complex' || !attribute.multiValued) this.fail('type_mismatch', `${attribute.name} is not a multi-valued complex attribute`, start)
    return attribute
  }

  /** A comparison on a complex attribute compares its `value` sub-attribute (RFC 7644 §3.4.2.2). */
  #compared (attribute: ScimAttributeDefinition, start: number): ScimAttributeDefinition {
    if (attribute.type !== 'complex') return attribute
    const value = scimAttribute(this.#options.resourceType, `${attribute.name}.value`)
    if (value === undefined) this.fail('type_mismatch', `${attribute.name} is complex: compare one of its sub-attributes`, start)
    return value
  }

  #value (): ScimFilterValue {
    const character = this.peekCharacter()
    if (character === '"') {
      const text = this.#match(STRING)
      if (text === undefined) this.fail('syntax', 'an unterminated or malformed string')
      return JSON.parse(text) as string
    }
    if (character === '-' || (character >= '0' && character <= '9')) {
      const text = this.#match(NUMBER)
      // A number runs to a delimiter: "01" or "1x" is no number.
      if (text === undefined || /[0-9A-Za-z._]/.test(this.#text.charAt(this.#position))) this.fail('syntax', 'a malformed number')
      const number = Number(text)
      if (!Number.isFinite(number)) this.fail('syntax', 'a number out of range')
      return number
    }
    const literal = this.keyword(LITERALS)
    if (literal === undefined) this.fail('syntax', 'expected a value: a quoted string, a number, true, false or null')
    return literal === 'null' ? null : literal === 'true'
  }

  /**
   * An attribute path (`[URN ":"] name ["." sub]`) as the store's attribute. Inside a value path,
   * a bare name is a sub-attribute of `parent`.
   */
  resolve (text: string, start: number, parent: ScimAttributeDefinition | undefined): ScimAttributeDefinition {
    const resourceType = this.#options.resourceType
    const colon = text.lastIndexOf(':')
    let name = text
    if (colon !== -1) {
      if (parent !== undefined) this.fail('unknown_attribute', 'a schema URN inside a value path', start)
      const urn = text.slice(0, colon)
      const schema = RESOURCE_SCHEMAS[resourceType].find((candidate) => candidate.toLowerCase() === urn.toLowerCase())
      if (schema === undefined) this.fail('unknown_attribute', `an unknown schema for ${resourceType}`, start)
      name = schema === SCIM_USER_SCHEMA || schema === SCIM_GROUP_SCHEMA ? text.slice(colon + 1) : `${schema}:${text.slice(colon + 1)}`
    }
    const local = colon === -1 ? name : text.slice(colon + 1)
    if (!ATTRIBUTE_NAME.test(local)) this.fail('syntax', 'a malformed attribute name', start)
    const full = parent === undefined ? name : `${parent.name}.${name}`
    if (parent !== undefined && name.includes('.')) this.fail('unknown_attribute', `${parent.name} has no such sub-attribute`, start)
    const attribute = scimAttribute(resourceType, full)
    if (attribute === undefined) this.fail('unknown_attribute', `${boundedName(full)} is not a supported ${resourceType} attribute`, start)
    return attribute
  }
}

const AND: ReadonlySet<string> = new Set(['and'])
const OR: ReadonlySet<string> = new Set(['or'])
const NOT: ReadonlySet<string> = new Set(['not'])
const OPERATORS: ReadonlySet<string> = new Set([...COMPARE_OPERATORS, 'pr'])
const LITERALS: ReadonlySet<string> = new Set(['true', 'false', 'null'])

/** An attribute name as a message may show it: the grammar's characters only, at most 100. */
function boundedName (name: string): string {
  return name.length > 100 ? `${name.slice(0, 100)}...` : name
}

type Failure = (reason: ScimFilterError['reason'], detail: string) => never

/** The value, checked against the attribute's type and the operator; a dateTime as ISO 8601 UTC. */
function checkValue (attribute: ScimAttributeDefinition, operator: ScimCompareOperator, value: ScimFilterValue, fail: Failure): ScimFilterValue {
  const mismatch = (detail: string): never => fail('type_mismatch', `${attribute.name} ${detail}`)
  if (value === null) {
    if (operator !== 'eq' && operator !== 'ne') mismatch(`cannot be compared with null by ${operator} (only eq and ne)`)
    return null
  }
  switch (attribute.type) {
    case 'boolean':
      if (operator !== 'eq' && operator !== 'ne') mismatch(`is a boolean: only eq and ne apply, not ${operator}`)
      if (typeof value !== 'boolean') mismatch('is a boolean: compare it with true or false')
      return value
    case 'decimal':
    case 'integer':
      if (SUBSTRING.has(operator)) mismatch(`is a number: ${operator} does not apply`)
      if (typeof value !== 'number') mismatch('is a number: compare it with a number')
      return value
    case 'dateTime': {
      if (SUBSTRING.has(operator)) mismatch(`is a date-time: ${operator} does not apply`)
      const ms = typeof value === 'string' && DATE_TIME.test(value) ? Date.parse(value) : Number.NaN
      if (!Number.isFinite(ms)) mismatch('is a date-time: compare it with an RFC 3339 date-time such as "2026-01-31T12:00:00Z"')
      return new Date(ms).toISOString()
    }
    default:
      if (typeof value !== 'string') mismatch('is a string: compare it with a quoted string')
      if (ORDERING.has(operator) && attribute.type === 'reference') mismatch(`is a reference: ${operator} does not apply`)
      return value
  }
}

function checkLength (text: string, scimType: Options['scimType']): void {
  if (typeof text !== 'string') throw new ScimFilterError('syntax', 0, 'not a string', scimType)
  if (text.length > SCIM_FILTER_LIMITS.maxLength) throw new ScimFilterError('too_long', SCIM_FILTER_LIMITS.maxLength, `longer than ${SCIM_FILTER_LIMITS.maxLength} characters`, scimType)
  if (text.trim() === '') throw new ScimFilterError('syntax', 0, 'empty', scimType)
}

/**
 * Parses a SCIM filter on `resourceType`'s attributes (RFC 7644 §3.4.2.2). Throws
 * {@link ScimFilterError} (`invalidFilter`) for anything it does not fully understand.
 *
 * @public @experimental
 */
export function parseScimFilter (resourceType: DirectoryResourceType, text: string): ScimFilter {
  checkLength(text, 'invalidFilter')
  const parser = new Parser(text, { resourceType, scimType: 'invalidFilter' })
  const filter = parser.filter(0, undefined)
  if (!parser.atEnd) parser.fail('syntax', 'unexpected text after the filter')
  return filter
}

/**
 * Parses a PATCH operation's `path` (RFC 7644 §3.5.2: `attrPath` or `valuePath ["." subAttr]`)
 * on `resourceType`'s attributes. Throws {@link ScimFilterError} (`invalidPath`; its filter's
 * problems too).
 *
 * @public @experimental
 */
export function parseScimPath (resourceType: DirectoryResourceType, text: string): ScimPath {
  checkLength(text, 'invalidPath')
  const parser: Parser = new Parser(text, { resourceType, scimType: 'invalidPath' })
  const { text: word, start } = parser.word('an attribute')
  const attribute = parser.resolve(word, start, undefined)
  if (parser.atEnd) return { attribute: attribute.name }
  if (parser.peekCharacter() !== '[') parser.fail('syntax', 'expected [ or the end of the path')
  if (attribute.type !== 'complex' || !attribute.multiValued) parser.fail('type_mismatch', `${attribute.name} is not a multi-valued complex attribute`, start)
  parser.expectCharacter('[')
  const filter = parser.filter(1, attribute)
  parser.expectCharacter(']')
  // "." directly after "]" (no space): the sub-attribute of the matching values.
  const dot = parser.position
  if (text.charAt(dot) !== '.') {
    if (parser.atEnd) return { attribute: attribute.name, filter }
    parser.fail('syntax', 'expected .subAttribute or the end of the path')
  }
  const subStart = dot + 1
  const sub = /^[A-Za-z][A-Za-z0-9_-]*$/.exec(text.slice(subStart))
  if (sub === null) parser.fail('syntax', 'a malformed sub-attribute', subStart)
  const subAttribute = scimAttribute(resourceType, `${attribute.name}.${sub[0]}`)
  if (subAttribute === undefined) parser.fail('unknown_attribute', `${attribute.name} has no such sub-attribute`, subStart)
  return { attribute: attribute.name, filter, subAttribute: subAttribute.name }
}
