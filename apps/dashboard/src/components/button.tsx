import type { ButtonHTMLAttributes } from 'react';
import styles from './button.module.css';

type Variant = 'default' | 'primary' | 'danger' | 'ghost';

interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: Variant;
  small?: boolean;
}

export function Button({ variant = 'default', small = false, className, type = 'button', ...props }: ButtonProps) {
  const classes = [styles.button, styles[variant], small ? styles.small : '', className ?? ''].filter(Boolean).join(' ');
  return <button type={type} className={classes} {...props} />;
}
