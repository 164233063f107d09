// Which file operations a target offers: its declaration (TargetInfo.supported_operations)
// and the method behind it, both. The one place that decides; the targets route shows it and
// every operation asks it.
import type { FileOperation } from '../../../shared/api.js';
import { notSupported } from '../errors.js';
import type { Target } from '../target.js';

const METHOD: Record<FileOperation, keyof Target> = {
  delete: 'deleteResource',
  rename: 'moveResource',
  move: 'moveResource',
  create_folder: 'createFolder',
};

const WORDS: Record<FileOperation, string> = {
  delete: 'deleting files and folders',
  rename: 'renaming',
  move: 'moving files and folders to another folder',
  create_folder: 'making new folders',
};

export function supportedOperations(target: Target): Record<FileOperation, boolean> {
  const declared = target.info.supported_operations;
  const on = (operation: FileOperation) => declared?.[operation] === true && typeof target[METHOD[operation]] === 'function';
  return { delete: on('delete'), rename: on('rename'), move: on('move'), create_folder: on('create_folder') };
}

/** 405 with a sentence naming the target and the operation. */
export function requireOperation(target: Target, operation: FileOperation): void {
  if (!supportedOperations(target)[operation]) {
    throw notSupported(`${target.info.readable_name} does not support ${WORDS[operation]} in Ferry (its supported_operations.${operation} is false).`);
  }
}
