// StreamScope's version: package.json's, read when the module loads (Node
// imports the JSON; the app's bundles inline it when they are built), so
// the CLI's --version, the recordings' meta recorder_version, the API's
// capabilities().version in both modes and the collector's stamp
// (native/CMakeLists.txt reads the same file) cannot disagree.
import packageJson from '../../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;
