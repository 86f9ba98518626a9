/** Where the suite lives and where it keeps what it installs (compat/.work/, git-ignored). */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const COMPAT_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const REPO_DIR = dirname(COMPAT_DIR);
export const WORK_DIR = join(COMPAT_DIR, '.work');
export const BIN_DIR = join(WORK_DIR, 'bin');
export const VENV_DIR = join(WORK_DIR, 'venv');
export const M2_DIR = join(WORK_DIR, 'm2');
export const GO_DIR = join(WORK_DIR, 'go');
