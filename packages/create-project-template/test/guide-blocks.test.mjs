// @ts-check
/**
 * The convention of the core's task guides for shell blocks (test/guide-commands.mjs, whose runs
 * execute them in the generator's end-to-end test): every ```sh block is run by a run there or
 * marked ```sh no-test <reason>; a new unmarked block fails here, in milliseconds, without the
 * end-to-end install.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CLAIMS, shellBlocks, unclaimedBlocks } from './guide-commands.mjs'

test('every shell block of the guides is run by test/guide-commands.mjs or marked `sh no-test <reason>`', () => {
  const blocks = shellBlocks()
  assert.ok(blocks.length >= Object.keys(CLAIMS).length, `only ${blocks.length} shell blocks`)
  assert.deepEqual(unclaimedBlocks(blocks), [])
})

test('the check has teeth: an unmarked new block, a marker without a reason and a changed command are reported', () => {
  const blocks = shellBlocks()
  const added = { guide: 'observe.md', line: 999, info: 'sh', kind: /** @type {const} */ ('command'), reason: '', text: 'curl -s https://app.example.com/health' }
  const bare = { ...added, line: 1000, info: 'sh no-test', kind: /** @type {const} */ ('no-test'), reason: '' }
  assert.deepEqual(unclaimedBlocks([...blocks, added, bare]), ['observe.md:999: ```sh', 'observe.md:1000: ```sh no-test'])
  const changed = blocks.map((block) => block.guide === 'several-instances.md' ? { ...block, text: 'npm run generate-keys' } : block)
  assert.throws(() => unclaimedBlocks(changed), /CLAIMS\.generateKey: 0 blocks of several-instances\.md/)
})
