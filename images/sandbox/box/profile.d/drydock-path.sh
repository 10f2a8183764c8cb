# shellcheck shell=sh
# A login shell (`bash -l`, `su -`) runs Debian's /etc/profile, which sets PATH afresh and drops
# the image's own: the project's venv (/opt/venv/bin: python3, pip, pytest) and drydock's tools.
# Put them back in front, once.
case ":${PATH}:" in
  *:/opt/venv/bin:*) ;;
  *) PATH="/opt/drydock/bin:/opt/venv/bin:${PATH}"; export PATH ;;
esac
