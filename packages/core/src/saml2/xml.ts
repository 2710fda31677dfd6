/**
 * XML reading for SAML2 (IdP metadata, responses, verified assertions) with @xmldom/xmldom and
 * plain DOM walking: no regular expressions on XML, no XPath strings built from input, no DTDs.
 */
import { DOMParser, onWarningStopParsing, type Document, type Element, type Node } from '@xmldom/xmldom'
import { shapeViolationInDocument, shapeViolationInText, type XmlShape } from './message-shape.js'
import { CoreError } from '../errors.js'

export const SAML_PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const SAML_ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion'
export const SAML_METADATA_NS = 'urn:oasis:names:tc:SAML:2.0:metadata'
export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'

const ELEMENT_NODE = 1
const PROCESSING_INSTRUCTION_NODE = 7
const COMMENT_NODE = 8
const DOCUMENT_TYPE_NODE = 10

/** A SAML2 document (message or metadata) refused; `reason` is a fixed phrase, never input. */
export class Saml2RejectedError extends CoreError {
  readonly reason: string

  constructor (what: string, reason: string, options?: ErrorOptions) {
    super(`${what} rejected: ${reason}`, options)
    this.reason = reason
  }
}

/** The document is not XML this product accepts. */
export class Saml2XmlError extends Saml2RejectedError {
  constructor (reason: string, options?: ErrorOptions) {
    super('SAML2 XML', reason, options)
    this.name = 'Saml2XmlError'
  }
}

/**
 * Parses `text` strictly (any parser warning stops parsing) within `shape` (see
 * message-shape.ts: element count, children per element, depth), so no library walks a document
 * built to be slow. A document type declaration is refused before the parser sees it: SAML never
 * needs one, and a DTD is how entity expansion and external-entity payloads arrive.
 */
export function parseXmlDocument (text: string, shape: XmlShape): Document {
  const upper = text.toUpperCase()
  if (upper.includes('<!DOCTYPE') || upper.includes('<!ENTITY')) throw new Saml2XmlError('document type declaration')
  const tooLarge = shapeViolationInText(text, shape)
  if (tooLarge !== undefined) throw new Saml2XmlError(tooLarge)
  let document: Document
  try {
    document = new DOMParser({ onError: onWarningStopParsing }).parseFromString(text, 'text/xml')
  } catch (error) {
    throw new Saml2XmlError('not well-formed', { cause: error })
  }
  if (document.doctype !== null || document.documentElement === null) throw new Saml2XmlError('not well-formed')
  for (const node of Array.from(document.childNodes)) {
    if (node.nodeType === DOCUMENT_TYPE_NODE) throw new Saml2XmlError('document type declaration')
  }
  const violation = shapeViolationInDocument(document, shape)
  if (violation !== undefined) throw new Saml2XmlError(violation)
  return document
}

/**
 * Refuses comments and processing instructions anywhere in the document. Canonicalization drops
 * comments, so a comment inside a signed NameID is invisible to the signature (the CVE-2017-11428
 * class); no IdP needs one in a protocol message.
 */
export function assertNoCommentsOrInstructions (document: Document): void {
  const pending: Node[] = [document.documentElement as Node]
  while (pending.length > 0) {
    const node = pending.pop() as Node
    if (node.nodeType === COMMENT_NODE) throw new Saml2XmlError('comment in message')
    if (node.nodeType === PROCESSING_INSTRUCTION_NODE) throw new Saml2XmlError('processing instruction in message')
    for (const child of Array.from(node.childNodes)) pending.push(child)
  }
  for (const node of Array.from(document.childNodes)) {
    if (node.nodeType === COMMENT_NODE || node.nodeType === PROCESSING_INSTRUCTION_NODE) throw new Saml2XmlError('comment in message')
  }
}

export function isElement (node: Node | null | undefined, namespace: string, localName: string): node is Element {
  return node !== null && node !== undefined && node.nodeType === ELEMENT_NODE &&
    (node as Element).namespaceURI === namespace && (node as Element).localName === localName
}

/** Direct child elements of `parent` with this namespace and local name, in document order. */
export function childElements (parent: Node, namespace: string, localName: string): Element[] {
  return Array.from(parent.childNodes).filter((node): node is Element => isElement(node, namespace, localName))
}

export function firstChildElement (parent: Node, namespace: string, localName: string): Element | undefined {
  return childElements(parent, namespace, localName)[0]
}

/** Every direct child that is an element, whatever its name. */
export function elementChildren (parent: Node): Element[] {
  return Array.from(parent.childNodes).filter((node): node is Element => node.nodeType === ELEMENT_NODE)
}

/** The element's whole text (every text node, comments excluded), so nothing is truncated. */
export function textOf (element: Element): string {
  return element.textContent ?? ''
}

/** An attribute's value, or undefined when absent. */
export function attributeOf (element: Element, name: string): string | undefined {
  return element.hasAttribute(name) ? element.getAttribute(name) ?? undefined : undefined
}
