// Confirmation before an action that changes or removes data: a modal dialog with real
// buttons, Cancel focused first, Escape cancelling.

// confirmAction asks message and resolves true when the operator presses the button named
// label.
export function confirmAction(message, label) {
  const dialog = document.getElementById('confirm-dialog');
  document.getElementById('confirm-message').textContent = message;
  document.getElementById('confirm-yes').textContent = label;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}
