/** Whether a directory's file system takes O_DIRECT, asked of the kernel itself (not of the code under test). */
import { closeSync, constants, openSync, rmSync } from 'node:fs';
import path from 'node:path';

/** True where an O_DIRECT open succeeds (ext4, xfs; tmpfs from Linux 6.6), false where it is refused (EINVAL). */
export function takesDirectIo(dir: string): boolean {
  const probe = path.join(dir, `direct-io-probe-${process.pid}`);
  closeSync(openSync(probe, 'w'));
  try {
    closeSync(openSync(probe, constants.O_WRONLY | constants.O_DIRECT));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return false;
    throw err;
  } finally {
    rmSync(probe, { force: true });
  }
}
