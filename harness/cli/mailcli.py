"""`mail`: a case's fix patches as the mails their sender sends."""

from __future__ import annotations

from pathlib import Path

from .. import errors, jsonout
from ..output import mail, mailcheck
from .common import add_command, emit, folder, output_group


def cmd_mail(a) -> int:
    sender = mail.identity()
    mails = [(p, mail.mail_of(p, sender)) for p in a.patches]
    checks = [mailcheck.check(p, text, a.tree) for p, text in mails] if a.check else []
    if any(not c.ok for c in checks):
        raise mailcheck.failure(checks)
    written = []
    if a.output:
        a.output.mkdir(parents=True, exist_ok=True)
        for p, text in mails:
            jsonout.write_text(a.output / p.name, text)
            written.append(str(a.output / p.name))
    payload = {"command": "mail", "ok": True, "from": sender.line(),
               "mails": [{"patch": str(p), "reproduce": mail.reproduce(p),
                          "file": written[i] if written else None,
                          "text": None if written else text}
                         for i, (p, text) in enumerate(mails)]}
    if a.check:
        payload["checks"] = [c.to_json() for c in checks]
    said = [f"checked {c.patch}: clean under checkpatch.pl {' '.join(c.options)}"
            for c in checks]
    emit(a, payload, "\n".join(said + [f"wrote {w}" for w in written]) if written else
         "\n".join(text.rstrip("\n") + "\n" for _, text in mails).rstrip("\n"))
    return errors.EXIT_OK


def add_parsers(sub) -> None:
    p = add_command(
        sub, "mail", cmd_mail, "a case's fix patches as your mails (From:, Signed-off-by:)",
        "Turn fix patches (a case's fix/*.patch, or any git format-patch file) "
        "into the mails you send: From: and Signed-off-by: are yours, git's user.name and "
        "user.email where you run it (refused without them: dmaharness signs off for no "
        "one); the patch's own trailers stay; below the '---' line a note says the report "
        "came from dmaharness and gives the one command that reproduces it and shows the "
        "fix take it out (the patch's case). Nothing is sent: print them, or write them "
        "into DIR for git send-email.\n\n"
        "--check checks each mail first, as its subsystems' maintainers would: the kernel "
        "tree's scripts/checkpatch.pl --strict with the options the Maintainer Entry "
        "Profiles (P:) of its MAINTAINERS sections ask for (media: --max-line-length=80), "
        "and a Cc: stable only with its reason (docs/mail.md). The tree is --tree DIR, or "
        "the cached, unpacked linux-source of the patch's version (patches/<version>/); "
        "a failing mail is exit 4 with checkpatch's lines, no tree exit 3.",
        examples=("dmaharness mail patches/6.1/cases/uvc-status-buffer/fix/*.patch",
                  "# checked as its maintainers would, written for git send-email",
                  "dmaharness mail --check -o out/ \\",
                  "    patches/7.3/cases/virtio-scsi-kick-event/fix/*.patch",
                  "git send-email out/*.patch"),
        codes=(errors.EXIT_INPUT,),
        meaning={errors.EXIT_ENV: "environment: no git identity (user.name, user.email), "
                 "no kernel tree for --check, standard output closed or full",
                 errors.EXIT_INPUT: "bad input: a patch cannot be read, or --check: a mail "
                 "fails (checkpatch's lines are printed)"})
    p.add_argument("patches", type=Path, nargs="+", metavar="PATCH",
                   help="a git format-patch file")
    p.add_argument("-o", "--output", type=folder, metavar="DIR",
                   help="write each mail to DIR/<the patch's name> instead of printing it")
    p.add_argument("--check", action="store_true",
                   help="check each mail with checkpatch.pl and its subsystems' profile "
                        "options, and its Cc: stable; nothing is written when one fails (exit 4)")
    p.add_argument("--tree", type=Path, metavar="DIR",
                   help="with --check: the kernel tree whose checkpatch.pl and MAINTAINERS "
                        "to use (default: the cached linux-source of the patch's version)")
    output_group(p)
