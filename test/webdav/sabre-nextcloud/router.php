<?php
// A real SabreDAV server (Debian's php-sabre-dav, the library Nextcloud's WebDAV is built
// on) run by `php -S` on loopback, with one plugin that enforces what Nextcloud adds on top
// of SabreDAV for file names and modification times. Configured by environment variables:
// FERRY_DAV_ROOT (the folder served), FERRY_DAV_USER, FERRY_DAV_PASSWORD.
//
// Evidence, per rule (nextcloud/server):
// - lib/private/Files/FilenameValidator.php (since 30): a trimmed-empty name, "." and "..",
//   more than 250 bytes, a forbidden name (default `.htaccess`), a forbidden extension
//   (default `.filepart`; `.part` always), control characters and the always-invalid
//   characters `\` and `/` (OCP\Constants::FILENAME_INVALID_CHARS) are refused, each with
//   its own sentence.
// - apps/dav/lib/Connector/Sabre/ObjectTree.php getNodeForPath: every request path's last
//   segment is verified first, so PROPFIND, PUT, DELETE of such a name all fail the same way;
//   Directory::moveInto and ObjectTree::copy verify a MOVE/COPY destination's name.
// - apps/dav/lib/Connector/Sabre/Exception/InvalidPath.php: the refusal is HTTP 400 with
//   the Sabre error body plus <o:retry>false</o:retry> and <o:reason>sentence</o:reason>.
// - apps/dav/lib/Connector/Sabre/File.php put(): an `X-OC-MTime` header (Unix seconds) is
//   applied to the written file and answered with `X-OC-MTime: accepted`; MtimeSanitizer.php
//   refuses a value that is not a decimal integer or is one day after 1970 or less (the
//   status here, 400, is this plugin's: Nextcloud fails the PUT with the same sentence).
// - apps/dav/lib/Connector/Sabre/FilesPlugin.php: `oc:fileid`, the file's stable id.
// SabreDAV's own rules stay as they are (a MOVE onto an existing file deletes it first, so the
// file gets the moved one's id, as Nextcloud's ChunkingPlugin::performMove says of Sabre) (e.g. {DAV:}getlastmodified is a protected property:
// a PROPPATCH of it gets 403 in the multistatus, Sabre\DAV\Server::$protectedProperties).

namespace {
    error_reporting(E_ALL & ~E_DEPRECATED & ~E_USER_DEPRECATED);
    ini_set('display_errors', '0');
    require_once 'Sabre/autoload.php';
}

// Nextcloud's own class name, as its error bodies show it in <s:exception>
namespace OCA\DAV\Connector\Sabre\Exception {
use Sabre\DAV;

class InvalidPath extends DAV\Exception {
    public function getHTTPCode() { return 400; }
    public function serialize(DAV\Server $server, \DOMElement $errorNode) {
        $errorNode->setAttribute('xmlns:o', 'http://owncloud.org/ns');
        $errorNode->appendChild($errorNode->ownerDocument->createElementNS('o:', 'o:retry', 'false'));
        $errorNode->appendChild($errorNode->ownerDocument->createElementNS('o:', 'o:reason', htmlspecialchars($this->getMessage(), ENT_NOQUOTES, 'UTF-8')));
    }
}

}

namespace {
use Sabre\DAV;
use OCA\DAV\Connector\Sabre\Exception\InvalidPath;

class NextcloudRules extends DAV\ServerPlugin {
    private $server;
    public function __construct(private string $root) {}

    public function initialize(DAV\Server $server) {
        $this->server = $server;
        // after the auth plugin (10), as in Nextcloud, before any node is looked up
        $server->subscribeEvent('beforeMethod', [$this, 'checkPaths'], 20);
        $server->subscribeEvent('afterCreateFile', [$this, 'applyMtime']);
        $server->subscribeEvent('afterWriteContent', [$this, 'applyMtime']);
        $server->subscribeEvent('beforeGetProperties', [$this, 'fileId']);
    }

    // oc:fileid, Nextcloud's stable id of a file (apps/dav FilesPlugin): here the inode, which
    // a PUT onto the file keeps and a MOVE over it (Sabre deletes the destination first) does not
    public function fileId($path, $node, &$requested, &$returned) {
        $key = array_search('{http://owncloud.org/ns}fileid', $requested, true);
        if ($key === false) return true;
        unset($requested[$key]);
        $inode = @fileinode($this->root . '/' . trim($path, '/'));
        if ($inode !== false) $returned[200]['{http://owncloud.org/ns}fileid'] = (string)$inode;
        return true;
    }

    public function checkPaths($method, $uri) {
        if (trim($uri, '/') !== '') $this->validate(basename($uri));
        if (($method === 'MOVE' || $method === 'COPY') && ($dest = $this->server->httpRequest->getHeader('Destination'))) {
            $this->validate(basename($this->server->calculateUri($dest)));
        }
        return true;
    }

    private function validate(string $name) {
        $trimmed = trim($name);
        if ($trimmed === '') throw new InvalidPath('Empty filename is not allowed');
        if ($trimmed === '.' || $trimmed === '..') throw new InvalidPath('Dot files are not allowed');
        if (isset($name[250])) throw new InvalidPath('Filename is too long');
        $lower = mb_strtolower($name);
        if (in_array($lower, ['.htaccess'], true)) throw new InvalidPath(sprintf('"%s" is a forbidden file or folder name.', $lower));
        foreach (['.filepart', '.part'] as $extension) {
            if (str_ends_with($lower, $extension)) throw new InvalidPath(sprintf('"%s" is a forbidden file type.', $extension));
        }
        if (filter_var($name, FILTER_UNSAFE_RAW, FILTER_FLAG_STRIP_LOW) !== $name) throw new InvalidPath('Invalid characters in path');
        foreach (['\\', '/'] as $char) {
            if (str_contains($name, $char)) throw new InvalidPath(sprintf('"%s" is not allowed inside a file or folder name.', $char));
        }
    }

    public function applyMtime($uri) {
        $header = $this->server->httpRequest->getHeader('X-OC-MTime');
        if ($header === null || $header === '') return true;
        // apps/dav/lib/Connector/Sabre/MtimeSanitizer.php: not numeric, hexadecimal, or one day after 1970 or less
        if (!is_numeric($header) || preg_match('/^\s*0[xX]/', $header)) throw new DAV\Exception\BadRequest(sprintf('X-OC-MTime header must be a valid integer (unix timestamp), got "%s".', $header));
        if ((int)$header <= 24 * 60 * 60) throw new DAV\Exception\BadRequest(sprintf('X-OC-MTime header must be a valid positive integer, got "%s".', $header));
        if (touch($this->root . '/' . trim($uri, '/'), (int)$header)) $this->server->httpResponse->setHeader('X-OC-MTime', 'accepted');
        return true;
    }
}

class Account extends DAV\Auth\Backend\AbstractBasic {
    protected function validateUserPass($username, $password) {
        return hash_equals((string)getenv('FERRY_DAV_USER'), (string)$username) && hash_equals((string)getenv('FERRY_DAV_PASSWORD'), (string)$password);
    }
}

$root = getenv('FERRY_DAV_ROOT');
$server = new DAV\Server(new DAV\FS\Directory($root));
$server->setBaseUri('/remote.php/dav/files/' . getenv('FERRY_DAV_USER') . '/');
$server->addPlugin(new DAV\Auth\Plugin(new Account(), 'Nextcloud'));
$server->addPlugin(new NextcloudRules($root));
// Nextcloud does not expose the Sabre version in its error bodies
DAV\Server::$exposeVersion = false;
$server->exec();
}
