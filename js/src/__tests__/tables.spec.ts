/**
 * The data tables' cells (views/common.ts, cellParts): a number column's
 * cells are right-aligned as its head is, whatever the cell adds. The
 * browser tests read the tables these cells build (Sweep, Memory, Change,
 * Ranks).
 */

import { describe, expect, it } from 'vitest';

import { cellParts, TableColumn } from '../views/common';

const text: TableColumn = ['op'];
const number: TableColumn = ['time', true];

describe('a data table cell', () => {
  it('is plain text in a text column', () => {
    expect(cellParts(text, 'matmul')).toEqual({
      props: null,
      children: ['matmul']
    });
  });

  it('takes its number column class', () => {
    expect(cellParts(number, '1.2 ms')).toEqual({
      props: { class: 'jp-brrr-num' },
      children: ['1.2 ms']
    });
  });

  it('adds its own class and tooltip to the column class', () => {
    expect(
      cellParts(number, { content: '2x', class: 'jp-brrr-x', title: 'why' })
    ).toEqual({
      props: { class: 'jp-brrr-num jp-brrr-x', title: 'why' },
      children: ['2x']
    });
    expect(
      cellParts(text, { content: 'aten::mm', class: 'jp-brrr-name' })
    ).toEqual({ props: { class: 'jp-brrr-name' }, children: ['aten::mm'] });
  });

  it('keeps an empty tooltip, which sets the attribute', () => {
    expect(cellParts(text, { content: 'ok', title: '' })).toEqual({
      props: { title: '' },
      children: ['ok']
    });
  });

  it('holds several children, or none', () => {
    expect(cellParts(text, { content: [null, 'span'] }).children).toEqual([
      null,
      'span'
    ]);
    expect(cellParts(text, null)).toEqual({ props: null, children: [null] });
    expect(cellParts(number, '')).toEqual({
      props: { class: 'jp-brrr-num' },
      children: ['']
    });
  });

  it('outside the columns, has no column class', () => {
    expect(cellParts(undefined, 'extra')).toEqual({
      props: null,
      children: ['extra']
    });
  });
});
