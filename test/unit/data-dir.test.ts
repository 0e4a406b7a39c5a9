import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findDataDir, resolveDataDir } from '../../src/data/data-dir.js';
import { MissingResourceError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/temp.js';

describe('data directory resolution', () => {
  const root = tempDir('dd');
  const project = path.join(root, 'project');
  mkdirSync(path.join(project, 'data'), { recursive: true });

  it('prefers --data-dir over everything', () => {
    expect(findDataDir('x', project, { TODEVAL_DATA: '/env' })).toEqual({ dir: path.join(project, 'x'), source: 'flag' });
  });
  it('uses TODEVAL_DATA when no flag is given', () => {
    expect(findDataDir(undefined, project, { TODEVAL_DATA: '/env' })).toEqual({ dir: '/env', source: 'env' });
  });
  it('ignores an empty ./data and reports nothing when ../shared/data is absent', () => {
    expect(findDataDir(undefined, project, {})).toBeUndefined();
    expect(() => resolveDataDir(undefined, project, {})).toThrow(MissingResourceError);
  });
  it('falls back to ../shared/data, then prefers ./data once it holds a dataset', () => {
    mkdirSync(path.join(root, 'shared', 'data'), { recursive: true });
    expect(findDataDir(undefined, project, {})?.source).toBe('shared');
    mkdirSync(path.join(project, 'data', 'sgd'));
    expect(findDataDir(undefined, project, {})).toEqual({ dir: path.join(project, 'data'), source: 'local' });
  });
});
