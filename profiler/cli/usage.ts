// How a command declares what it takes, once: its operands, its options
// (name, type, value, choices, default, one line that says what it does)
// and its examples. Both the parsing of its arguments (`parseCommand`, over
// node:util's parseArgs) and its `--help` (`commandHelp`) are read from that
// declaration, so the two cannot drift apart; commands.ts holds every
// command's. A usage problem (an unknown option, a missing or bad value, a
// missing operand) is a UsageError: streamscope.ts says it on one line that
// names the command, then where its help is, and exits 2.
import { parseArgs } from 'node:util';

export interface OptionSpec {
  readonly type: 'boolean' | 'string';
  /** One letter: `-o` for --output. */
  readonly short?: string;
  /** A string option given several times collects every value. */
  readonly multiple?: boolean;
  /** A boolean whose --no-NAME form says "no" where the default is decided later (report --job). */
  readonly negatable?: boolean;
  /** What the value is, as the help shows it: FILE, N, T. */
  readonly value?: string;
  /** The values a string option takes; any other is refused, naming them. */
  readonly choices?: readonly string[];
  /** A string option's value when it is not given: applied by parseCommand, shown by the help. */
  readonly default?: string;
  /** What happens when it is not given, where that is not a value (the help shows it as the default). */
  readonly otherwise?: string;
  /** Must be given (a command's output file): shown in the usage line, not among [options]. */
  readonly required?: boolean;
  /** One line. */
  readonly description: string;
}

export interface OperandSpec {
  readonly name: string;
  readonly optional?: boolean;
  /** Takes one or more (zero or more where optional). */
  readonly many?: boolean;
  readonly description: string;
}

export interface CommandSpec {
  /** One line, for `streamscope --help`. */
  readonly summary: string;
  readonly operands: readonly OperandSpec[];
  /** What follows `--`, taken as it is (record's COMMAND [ARGS...]); without it, words after `--` are operands. */
  readonly passthrough?: OperandSpec;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** [command line after `streamscope`, what it does]; at least one. */
  readonly examples: readonly (readonly [string, string])[];
  /** Paragraphs after the examples: what the options alone do not say. */
  readonly details?: string;
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean'
  ? boolean
  : O['multiple'] extends true
    ? string[]
    : O extends { readonly choices: readonly (infer C)[] }
      ? C
      : string;

export type Values<S extends CommandSpec> = { -readonly [K in keyof S['options']]?: ValueOf<S['options'][K]> };

export interface Parsed<S extends CommandSpec> {
  values: Values<S>;
  operands: string[];
  /** After `--` where the command declares a passthrough; otherwise empty. */
  passthrough: string[];
}

/** A usage problem of the running command; `showUsage`: the problem is the shape of the command line (its usage line helps). */
export class UsageError extends Error {
  readonly showUsage: boolean;
  constructor(message: string, opts: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = opts.showUsage ?? false;
  }
}

const HELP_FLAGS = ['--help', '-h'];

/** Asks for help: --help or -h among the command's own words (those after `--` belong to a target or are a query). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => HELP_FLAGS.includes(a));
}

/** How an option is written, value included: `-o, --output FILE`, `--align collectives|wall-clock`, `--job, --no-job`. */
function optionForm(name: string, o: OptionSpec): string {
  const names = [o.short ? `-${o.short}` : null, `--${name}`, o.negatable ? `--no-${name}` : null].filter(Boolean).join(', ');
  return o.type === 'boolean' ? names : `${names} ${valueName(o)}`;
}

/** What an option's value is, as the help and the errors name it: FILE, or its choices (text|json). */
function valueName(o: OptionSpec): string {
  return o.choices ? o.choices.join('|') : (o.value ?? 'VALUE');
}

function operandForm(o: OperandSpec): string {
  const one = o.many ? `${o.name}...` : o.name;
  return o.optional ? `[${one}]` : one;
}

/** The usage line: `streamscope merge A.sqlite [B.sqlite...] -o JOB.sqlite [options]`. */
export function usageLine(command: string, spec: CommandSpec): string {
  const required = Object.entries(spec.options)
    .filter(([, o]) => o.required)
    .map(([name, o]) => `${o.short ? `-${o.short}` : `--${name}`} ${valueName(o)}`);
  const tail = spec.passthrough ? ['[options]', '--', operandForm(spec.passthrough)] : ['[options]'];
  return ['usage: streamscope', command, ...spec.operands.map(operandForm), ...required, ...tail].join(' ');
}

/** Two columns: the form, then its line; a form too wide for the column puts its line beneath. */
function columns(rows: [string, string][]): string[] {
  const width = Math.min(30, rows.reduce((w, [form]) => Math.max(w, form.length), -Infinity) + 2);
  return rows.flatMap(([form, text]) => (form.length + 2 <= width ? [`  ${form.padEnd(width)}${text}`] : [`  ${form}`, `  ${''.padEnd(width)}${text}`]));
}

/** `streamscope COMMAND --help`: usage, arguments, options (each with its default), examples, details. */
export function commandHelp(command: string, spec: CommandSpec): string {
  const out = [usageLine(command, spec), '', `${spec.summary[0]!.toUpperCase()}${spec.summary.slice(1)}.`];
  const section = (title: string, lines: string[]) => {
    out.push('', title);
    for (const line of lines) out.push(line);
  };
  const operands = spec.passthrough ? [...spec.operands, spec.passthrough] : spec.operands;
  if (operands.length) section('arguments:', columns(operands.map((o) => [operandForm(o), o.description])));
  const options: [string, string][] = Object.entries(spec.options).map(([name, o]) => {
    const otherwise = o.default !== undefined ? o.default : o.otherwise;
    return [optionForm(name, o), otherwise !== undefined ? `${o.description} (default: ${otherwise})` : o.description];
  });
  options.push(['-h, --help', 'this help']);
  section('options:', columns(options));
  section(
    'examples:',
    spec.examples.flatMap(([line, what]) => [`  streamscope ${line}`, `      ${what}`]),
  );
  if (spec.details) out.push('', spec.details.trim());
  return out.join('\n') + '\n';
}

/** `streamscope --help`: every command on one line. */
export function commandsHelp(header: string, commands: Readonly<Record<string, CommandSpec>>): string {
  return [
    header,
    '',
    'usage: streamscope COMMAND [ARGS...]',
    '',
    'commands:',
    ...columns(Object.entries(commands).map(([name, spec]) => [name, spec.summary])),
    '',
    "streamscope COMMAND --help (or streamscope help COMMAND) prints a command's options and examples;",
    'streamscope --version prints the version.',
  ].join('\n');
}

/**
 * Optimal string alignment distance (Levenshtein with adjacent
 * transpositions: `--jsno` is one edit from `--json`), case-insensitive.
 */
function editDistance(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate `typed` most likely meant, or null: the nearest within a
 * third of its length in edits, one at least (a typo), else the shortest
 * that it begins (an abbreviation of three letters or more: --out for
 * --output). A single letter matches only itself in the other case (-O, -o).
 */
export function nearest(typed: string, candidates: readonly string[]): string | null {
  const word = typed.replace(/^-+/, '');
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c.replace(/^-+/, ''));
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  // One edit in a name of two letters or more (sq for sql), one more per three letters beyond.
  if (best !== null && bestDistance <= (word.length > 1 ? Math.max(1, Math.floor(word.length / 3)) : 0)) return best;
  if (word.length < 3) return null;
  const prefixed = candidates.filter((c) => c.replace(/^-+/, '').toLowerCase().startsWith(word.toLowerCase()));
  return prefixed.sort((x, y) => x.length - y.length)[0] ?? null;
}

/** ` (did you mean X?)`, or nothing. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const n = nearest(typed, candidates);
  return n ? ` (did you mean ${n}?)` : '';
}

/** An argument that reads as an option: a dash, a letter, then a name (anything else, `-`, `-1s`, a query starting with a `--` comment, is an operand). */
const OPTION_WORD = /^--?[A-Za-z][\w-]*(=|$)/;

/**
 * The command line `args` as `spec` declares it; UsageError for anything it
 * does not declare or that does not fit. node:util's parseArgs splits the
 * words (--name=value, -o value, grouped short flags, `--`); which names
 * exist, what their values may be and how many operands there are is
 * checked here, so that each problem is said in the command's own terms.
 */
export function parseCommand<S extends CommandSpec>(spec: S, args: readonly string[]): Parsed<S> {
  const config: Record<string, { type: 'boolean' | 'string'; short?: string; multiple?: boolean }> = {};
  for (const [name, o] of Object.entries(spec.options)) {
    config[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  const { tokens } = parseArgs({ args: [...args], options: config, strict: false, allowPositionals: true, allowNegative: true, tokens: true });
  const known = Object.entries(spec.options).flatMap(([name, o]) => [
    `--${name}`,
    ...(o.negatable ? [`--no-${name}`] : []),
    ...(o.short ? [`-${o.short}`] : []),
  ]);
  const values: Record<string, string | boolean | string[]> = {};
  const operands: string[] = [];
  const passthrough: string[] = [];
  let afterDashes = false;
  const seen = new Set<number>();
  for (const t of tokens) {
    if (t.kind === 'option-terminator') {
      afterDashes = true;
      continue;
    }
    if (t.kind === 'positional') {
      (afterDashes && spec.passthrough ? passthrough : operands).push(t.value);
      continue;
    }
    const word = args[t.index]!;
    if (!OPTION_WORD.test(word) || (!known.includes(t.rawName) && /\s/.test(word))) {
      // Not an option of any command (a query starting with a `--` comment, a negative number): an operand, once.
      if (!seen.has(t.index)) operands.push(word);
      seen.add(t.index);
      continue;
    }
    const [name, negated] = resolve(spec, t.rawName);
    if (name === null) throw new UsageError(`unknown option ${t.rawName}${didYouMean(t.rawName, known)}`);
    const o = spec.options[name]!;
    if (o.type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${t.rawName} takes no value, got '${t.value}'`);
      values[name] = !negated;
      continue;
    }
    // A string option followed by another of this command's options, or by `--`, was given no value (`-o --force`).
    if (t.value === undefined || (!t.inlineValue && (t.value === '--' || known.includes(t.value.split('=')[0]!)))) {
      throw new UsageError(`${t.rawName} needs a value (${valueName(o)})`);
    }
    if (o.choices && !o.choices.includes(t.value)) {
      throw new UsageError(`${t.rawName}: expected ${orList(o.choices)}, got '${t.value}'${didYouMean(t.value, o.choices)}`);
    }
    values[name] = o.multiple ? [...((values[name] as string[] | undefined) ?? []), t.value] : t.value;
  }
  for (const [name, o] of Object.entries(spec.options)) {
    if (values[name] === undefined && o.default !== undefined) values[name] = o.default;
    if (values[name] === undefined && o.required) {
      throw new UsageError(`missing ${o.short ? `-${o.short}` : `--${name}`} ${valueName(o)}`, { showUsage: true });
    }
  }
  checkOperands(spec, operands);
  return { values: values as Values<S>, operands, passthrough };
}

/** The option a written name stands for, and whether it was its --no- form; [null] for none. */
function resolve(spec: CommandSpec, rawName: string): [string | null, boolean] {
  if (rawName.startsWith('--')) {
    const name = rawName.slice(2);
    if (spec.options[name]) return [name, false];
    const base = name.startsWith('no-') ? name.slice(3) : null;
    return base !== null && spec.options[base]?.negatable ? [base, true] : [null, false];
  }
  const short = Object.entries(spec.options).find(([, o]) => o.short === rawName.slice(1));
  return [short ? short[0] : null, false];
}

function checkOperands(spec: CommandSpec, operands: string[]): void {
  const required = spec.operands.filter((o) => !o.optional);
  if (operands.length < required.length) throw new UsageError(`missing ${required[operands.length]!.name}`, { showUsage: true });
  const unbounded = spec.operands.some((o) => o.many);
  if (!unbounded && operands.length > spec.operands.length) {
    throw new UsageError(`unexpected argument '${operands[spec.operands.length]}'`, { showUsage: true });
  }
}

/** `a, b or c`. */
export function orList(xs: readonly string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} or ${xs.at(-1)}`;
}

/** The lines a usage problem is said in, on stderr. */
export function usageErrorText(command: string, spec: CommandSpec, err: UsageError): string {
  return (
    [`streamscope ${command}: ${err.message}`, ...(err.showUsage ? [usageLine(command, spec)] : []), `see streamscope ${command} --help`].join('\n') + '\n'
  );
}
