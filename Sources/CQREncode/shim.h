// libqrencode (Debian's libqrencode-dev): the dashboard's pairing QR codes.
#include <qrencode.h>
