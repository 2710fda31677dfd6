/**
 * XML signature wrapping (XSW1-XSW8, Somorovsky et al., USENIX Security 2012, as SAML Raider
 * builds them): DOM surgery on a signed SAMLResponse, no string splicing. Shared by the attack
 * corpus (test/security/saml2-attacks.test.ts) and its encrypted form
 * (test/security/saml2-encrypted-attacks.test.ts).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import type { Saml2FailureClass } from '../../../src/saml2/service-provider.js'
import type { TestSigningKey } from './certificates.js'

export const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion'
export const DSIG = 'http://www.w3.org/2000/09/xmldsig#'

/** The identity the attacker wants to become. */
export const ATTACKER_NAME_ID = 'admin@evil.example'

export const parse = (xml: string): Document => new DOMParser().parseFromString(xml, 'text/xml')
export const serialize = (document: Document): string => new XMLSerializer().serializeToString(document)
export const childrenOf = (parent: Element, namespace: string, localName: string): Element[] =>
  Array.from(parent.childNodes).filter((node): node is Element => node.nodeType === 1 && (node as Element).namespaceURI === namespace && (node as Element).localName === localName)
export const only = (parent: Element, namespace: string, localName: string): Element => {
  const found = childrenOf(parent, namespace, localName)
  assert.equal(found.length, 1, `fixture: one ${localName} under ${parent.localName}`)
  return found[0] as Element
}
export const freshId = (): string => `_evil${randomBytes(12).toString('hex')}`

/** A deep copy of `element` without its own (direct child) Signature. */
export function unsignedCopy (element: Element): Element {
  const copy = element.cloneNode(true) as Element
  for (const signature of childrenOf(copy, DSIG, 'Signature')) copy.removeChild(signature)
  return copy
}

/** Rewrites every NameID and role attribute value under `element` to the attacker's choice. */
export function makeEvil (element: Element, id: 'fresh' | 'duplicate'): Element {
  for (const nameId of Array.from(element.getElementsByTagNameNS(SAML, 'NameID'))) nameId.textContent = ATTACKER_NAME_ID
  for (const attribute of Array.from(element.getElementsByTagNameNS(SAML, 'Attribute'))) {
    if (attribute.getAttribute('Name') !== 'role') continue
    for (const value of childrenOf(attribute, SAML, 'AttributeValue')) value.textContent = 'Administrator'
  }
  if (id === 'fresh') element.setAttribute('ID', freshId())
  return element
}

export type XswVariant = 'XSW1' | 'XSW2' | 'XSW3' | 'XSW4' | 'XSW5' | 'XSW6' | 'XSW7' | 'XSW8'

/** What each variant breaks, in the words of the catalogue. */
export const XSW_DESCRIPTIONS: Readonly<Record<XswVariant, string>> = {
  XSW1: 'evil Response at the root keeps the enveloped Signature; the signed original Response moved inside that Signature',
  XSW2: 'evil Response at the root; the signed original Response placed beside the Signature (detached)',
  XSW3: 'unsigned evil Assertion inserted before the signed Assertion',
  XSW4: 'unsigned evil Assertion takes the place of the signed one, which becomes its child',
  XSW5: 'evil Assertion keeps the Signature; the unsigned original Assertion appended after it',
  XSW6: 'evil Assertion keeps the Signature; the original Assertion moved inside that Signature',
  XSW7: 'unsigned evil Assertion in samlp:Extensions before the signed Assertion',
  XSW8: 'evil Assertion keeps the Signature; the original Assertion moved into a ds:Object of that Signature'
}

/**
 * The class each variant ends in at the ACS, per ID strategy: 'malformed' when the envelope's
 * structure checks catch it first (two assertions beside each other, or a second assertion left
 * anywhere in a message whose signed assertion verified), 'signature' when node-saml's signature
 * scoping (enveloped signature of the very element read, unique referenced ID) refuses it.
 */
export const XSW_AT_ACS: Readonly<Record<XswVariant, { fresh: Saml2FailureClass, duplicate: Saml2FailureClass }>> = {
  XSW1: { fresh: 'signature', duplicate: 'signature' },
  XSW2: { fresh: 'signature', duplicate: 'signature' },
  XSW3: { fresh: 'malformed', duplicate: 'malformed' },
  XSW4: { fresh: 'signature', duplicate: 'signature' },
  XSW5: { fresh: 'malformed', duplicate: 'malformed' },
  XSW6: { fresh: 'signature', duplicate: 'signature' },
  XSW7: { fresh: 'malformed', duplicate: 'signature' },
  XSW8: { fresh: 'signature', duplicate: 'signature' }
}

/** Applies `variant` to a signed response document (XSW1/2: Response signed; XSW3-8: Assertion signed). */
export function wrap (xml: string, variant: XswVariant, id: 'fresh' | 'duplicate'): string {
  const document = parse(xml)
  const response = document.documentElement as Element
  if (variant === 'XSW1' || variant === 'XSW2') {
    const signature = only(response, DSIG, 'Signature')
    const original = unsignedCopy(response)
    makeEvil(response, id)
    if (variant === 'XSW1') signature.appendChild(original)
    else response.insertBefore(original, signature)
    return serialize(document)
  }
  const assertion = only(response, SAML, 'Assertion')
  const signature = only(assertion, DSIG, 'Signature')
  switch (variant) {
    case 'XSW3':
      response.insertBefore(makeEvil(unsignedCopy(assertion), id), assertion)
      break
    case 'XSW4': {
      const evil = makeEvil(unsignedCopy(assertion), id)
      response.replaceChild(evil, assertion)
      evil.appendChild(assertion)
      break
    }
    case 'XSW5': {
      const original = unsignedCopy(assertion)
      makeEvil(assertion, id)
      response.appendChild(original)
      break
    }
    case 'XSW6': {
      const original = unsignedCopy(assertion)
      makeEvil(assertion, id)
      signature.appendChild(original)
      break
    }
    case 'XSW7': {
      const extensions = document.createElementNS(SAMLP, 'samlp:Extensions')
      extensions.appendChild(makeEvil(unsignedCopy(assertion), id))
      response.insertBefore(extensions, only(response, SAMLP, 'Status'))
      break
    }
    case 'XSW8': {
      const original = unsignedCopy(assertion)
      makeEvil(assertion, id)
      const object = document.createElementNS(DSIG, 'ds:Object')
      object.appendChild(original)
      signature.appendChild(object)
      break
    }
  }
  return serialize(document)
}

/**
 * Fixture check: the IdP's signature over the moved original still verifies in the wrapped
 * message (xml-crypto alone, no SAML rules), so a rejection is the product's doing, not a
 * broken digest.
 */
export function originalSignatureVerifies (wrappedXml: string, key: TestSigningKey): boolean {
  const document = parse(wrappedXml)
  for (const signature of Array.from(document.getElementsByTagNameNS(DSIG, 'Signature'))) {
    const verifier = new SignedXml({ publicCert: key.certificatePem })
    verifier.loadSignature(signature)
    try {
      if (verifier.checkSignature(wrappedXml)) return true
    } catch {
      // a duplicated ID is refused by xml-crypto itself
    }
  }
  return false
}
