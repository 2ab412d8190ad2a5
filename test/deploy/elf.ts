import { readFileSync } from 'node:fs';

/**
 * The section names of a 64-bit little-endian ELF file (a Linux native module), read from its
 * section header table. Enough to tell a stripped module (no `.symtab`, no `.debug_*`) from one
 * that is not, without binutils.
 */
export function elfSectionNames(file: string): string[] {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) throw new Error(`${file}: not a 64-bit little-endian ELF file`);
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const shstrndx = b.readUInt16LE(0x3e);
  const header = (i: number) => shoff + i * shentsize;
  const strings = Number(b.readBigUInt64LE(header(shstrndx) + 0x18));
  const names: string[] = [];
  for (let i = 0; i < shnum; i++) {
    const start = strings + b.readUInt32LE(header(i));
    names.push(b.toString('latin1', start, b.indexOf(0, start)));
  }
  return names;
}
