/**
 * Shape bounds for XML that reaches this product from outside, checked before any library walks
 * it. The XPath engine that node-saml and xml-crypto use (`xpath` over @xmldom/xmldom) costs a few
 * microseconds per element per query and grows with the square of an element's child count, so a
 * 64 KB LogoutRequest of 16,000 empty siblings held the event loop for 2.4 s before its signature
 * was even looked at (issue 26, item 1). Every SAML document is therefore refused, by a plain
 * linear walk, when it has more elements, more children under one element or more nesting than
 * any identity provider sends; what is left costs the libraries at most a few milliseconds.
 *
 * The numbers are far above what real messages carry: a signed LogoutRequest or LogoutResponse
 * has about 20 elements; a signed Response with an assertion and 500 attribute values about 550;
 * IdP metadata with several roles and certificates a few hundred.
 */
import type { Document, Node } from '@xmldom/xmldom'

/** The most elements, children of one element, and nesting depth a document may have. */
export interface XmlShape {
  readonly name: string
  readonly maxElements: number
  readonly maxChildren: number
  readonly maxDepth: number
}

/** LogoutRequest and LogoutResponse (either binding): anonymous until their signature is checked. */
export const LOGOUT_MESSAGE_SHAPE: XmlShape = { name: 'logout message', maxElements: 256, maxChildren: 64, maxDepth: 16 }

/**
 * A posted SAMLResponse and its decrypted assertion: up to 1,280 elements (about 1,200 attribute
 * values, far above Entra ID's 150-group limit before overage), 1,024 under one element (values
 * of one attribute: a user in 1,000 groups) and 24 levels. node-saml's checks cost about 20 µs
 * per element on top of about 7 ms per response, so a hostile response at these bounds, after
 * correlation (which anyone can start), costs about 30 ms instead of the 6.5 s a 64 KB one cost
 * unbounded (`docs/security.md`, and the flood in `test/soak/saml2-parse-flood.soak.ts`). An IdP
 * that sends more attribute values should filter them (group filters, or the group-overage claim).
 */
export const RESPONSE_SHAPE: XmlShape = { name: 'SAMLResponse', maxElements: 1280, maxChildren: 1024, maxDepth: 24 }

/**
 * IdP metadata (from the configured MetadataUrl, at most 1 MB, fetched in the background, never
 * per request) and the SP's own metadata: room for a small federation aggregate.
 */
export const METADATA_SHAPE: XmlShape = { name: 'metadata', maxElements: 65_536, maxChildren: 4096, maxDepth: 32 }

const ELEMENT_NODE = 1

/** Why a document was refused for its shape: a fixed phrase, never a value from the input. */
export type ShapeViolation = 'too many elements' | 'too many child elements' | 'nested too deeply'

/**
 * Before parsing: a document with E elements has at most 2E + a few `<` characters (start and
 * end tags), so counting them refuses an oversized document without building its DOM.
 */
export function shapeViolationInText (text: string, shape: XmlShape): ShapeViolation | undefined {
  const allowed = shape.maxElements * 2 + 16
  let count = 0
  for (let index = text.indexOf('<'); index !== -1; index = text.indexOf('<', index + 1)) {
    if (++count > allowed) return 'too many elements'
  }
  return undefined
}

/** After parsing: one walk over the elements, stopping at the first bound crossed. */
export function shapeViolationInDocument (document: Document, shape: XmlShape): ShapeViolation | undefined {
  const root = document.documentElement
  if (root === null) return undefined
  let elements = 0
  const pending: Array<{ node: Node, depth: number }> = [{ node: root, depth: 1 }]
  while (pending.length > 0) {
    const { node, depth } = pending.pop() as { node: Node, depth: number }
    if (++elements > shape.maxElements) return 'too many elements'
    if (depth > shape.maxDepth) return 'nested too deeply'
    let children = 0
    for (let child = node.firstChild; child !== null; child = child.nextSibling) {
      if (child.nodeType !== ELEMENT_NODE) continue
      if (++children > shape.maxChildren) return 'too many child elements'
      pending.push({ node: child, depth: depth + 1 })
    }
  }
  return undefined
}
